// `drainer plan`'s look at the node's drain gate: does its gate pod + PDB exist, and do they hold a
// drain now? GETs only (plan changes nothing); a note, never a refusal: the gate does not stop an
// evacuation, it makes other drains wait for one.
import type { Config } from '../../config/schema.ts';
import { isNotFoundError } from '../../errors.ts';
import type { KubeClients } from '../../kube/client.ts';
import { gateName, gateSelector, getObject, isGatePodName, pdbsPath, podsPath } from '../../kube/gate.ts';
import { listAll } from '../../kube/watch.ts';
import { getNode } from '../../kube/node.ts';
import type { KubeObject } from '../../kube/types.ts';
import type { GateCheck, GateProbe } from '../preflight/preflight.ts';
import { effectivePod, seeHeld } from './observe.ts';
import { releasedAt } from './step.ts';
import { parseRecord, STATE_ANNOTATION } from '../record/record.ts';

const absentIfMissing = (p: Promise<KubeObject>): Promise<KubeObject | undefined> =>
  p.catch((err: unknown) => {
    if (isNotFoundError(err)) return undefined;
    throw err;
  });

export function gateProbe(k: KubeClients, config: Config): GateProbe {
  const { namespace } = config.fleet;
  return async (node, signal): Promise<GateCheck> => {
    if (!config.drainGate.enabled)
      return { state: 'off', note: 'none (drainGate.enabled false): drains of this node are not held' };
    const name = gateName(node);
    const where = `${namespace}/${name}`;
    const [pdb, pods, nodeObj] = await Promise.all([
      absentIfMissing(getObject(k, pdbsPath(namespace), name)),
      // its pod, or the spares made while the ones before are being deleted
      listAll<KubeObject>(k, { path: podsPath(namespace), query: { labelSelector: gateSelector(node) } }),
      getNode(k, node, signal),
    ]);
    const pod = effectivePod(pods.items.filter((p) => isGatePodName(node, p.metadata.name ?? '')));
    if (pdb && pod) {
      // held as status and the agent say it: PDB observed with no disruption allowed, pod Running and Ready
      const seen = seeHeld(node, { pdb, pod });
      if (seen.held) return { state: 'held', note: `held (${where}): drains wait until the VMs have left` };
      return { state: 'not-held', note: `not held (${where}): ${seen.text.replace(/^not held: /, '')}` };
    }
    if (releasedAt(parseRecord(nodeObj.metadata?.annotations?.[STATE_ANNOTATION]), nodeObj) !== undefined)
      return { state: 'not-held', note: `released (drainer release): drains of this node are not held` };
    const missing = pdb ? 'its pod' : pod ? 'its PodDisruptionBudget' : 'its pod and PodDisruptionBudget';
    return {
      state: 'not-held',
      note: `none (${where}: ${missing} not created yet; the agent creates them when it runs on the node)`,
    };
  };
}
