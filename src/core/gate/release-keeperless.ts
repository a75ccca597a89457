// `drainer release --node N` for a node with no record whose agent is gone for good: no agent holds
// its Lease, and the agent DaemonSet places none there (`drainer.dev/agent=disabled`, a nodeSelector
// that left it out). Nobody would ever open its gate, so release removes it, pod and PDB, after
// asking the plugins what is still on the host (VMs left: refused without --force).
import type { KubeClients } from '../../kube/client.ts';
import { gateName } from '../../kube/gate.ts';
import { getLease } from '../../kube/lease.ts';
import { isNotFoundError } from '../../errors.ts';
import { nodeLeaseName } from '../agent/node-lease.ts';
import { kubeGateApi } from './kube-port.ts';
import { anyLeft, remainingText } from './remaining.ts';
import type { ReleaseOptions, ReleaseResult } from './release-api.ts';

/** Does an agent hold the node's Lease, renewed within its duration (by our clock)? */
async function agentLive(k: KubeClients, namespace: string, node: string, now: Date): Promise<boolean> {
  try {
    const spec = (await getLease(k, namespace, nodeLeaseName(node))).spec;
    const until = Date.parse(spec?.renewTime ?? '') + (spec?.leaseDurationSeconds ?? 0) * 1000;
    return Boolean(spec?.holderIdentity) && until > now.getTime();
  } catch (err) {
    if (isNotFoundError(err)) return false;
    throw err;
  }
}

/** The release of a keeperless gate; undefined when the node has an agent, or one is coming. */
export async function releaseKeeperless(o: ReleaseOptions, now: Date): Promise<ReleaseResult | undefined> {
  const { namespace, daemonSet } = o.config.fleet;
  if (!o.config.drainGate.enabled) return undefined;
  const api = kubeGateApi({ k: o.k, namespace, daemonSet, image: o.config.drainGate.image, log: o.log });
  if (!api.successorExpected || !api.drop) return undefined;
  if (await agentLive(o.k, namespace, o.node, now)) return undefined;
  if (await api.successorExpected(o.node)) return undefined;
  const gate = `${namespace}/${gateName(o.node)}`;
  const why = `no agent runs on node ${o.node} and none will (DaemonSet ${namespace}/${daemonSet} places none there)`;
  const { pdb, pod } = await api.look(o.node);
  if (!pdb && !pod) return { released: true, lines: [`${why}; it has no drain gate: drains of it go on`] };
  const left = (await o.remaining?.()) ?? { names: [] };
  if (anyLeft(left) && !o.force)
    return {
      released: false,
      lines: [
        `${why}, and ${remainingText(left)} remain on the host: drain gate ${gate} not removed, as a drain that goes on (and the reboot or deletion after it) takes them down`,
        `move them first, or bring the agent back (kubectl label node ${o.node} drainer.dev/agent-), or remove it anyway: drainer release --node ${o.node} --force`,
      ],
    };
  await api.drop(o.node);
  const what = anyLeft(left)
    ? `with ${remainingText(left)} still on the host`
    : 'with no VM left on the host';
  return {
    released: true,
    lines: [
      `${why}: drain gate ${gate} removed ${what}; drains of ${o.node} go on now`,
      `an agent back on the node (kubectl label node ${o.node} drainer.dev/agent-) makes it again`,
    ],
  };
}
