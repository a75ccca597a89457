// No gate without a keeper (issue 48): a node's drain gate stays behind its agent only while a
// successor is expected there, that is while a DaemonSet of drainer's still places a pod on the node.
// Otherwise (the node labelled drainer.dev/agent=disabled, the DaemonSet gone) nobody will ever open
// it, and `kubectl drain` of the node waits on it until its timeout:
// - gate-without-keeper: nothing is left on the node to protect, so the stopping agent should have
//   dropped it (a broken promise);
// - vms-without-agent: VMs are still there, so the gate rightly holds drains; an operator must
//   bring an agent back or release the gate (an operator finding). A stopped server counts, as it does
//   for a drain's return (drain-returned-occupied): drainer keeps the gate for it.
// Needs the Leases and drainer's DaemonSets; without them, says nothing, as where no DaemonSet is in
// drainer's namespace at all (its agents run some other way: run-once, the e2e stacks' in-process agents).
import { gateName, isGatePodName } from '../../kube/gate.ts';
import { agentAlive } from '../agents.ts';
import { selectsNode } from '../daemonset.ts';
import { hostOfNode } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World, WorldNode } from '../world.ts';

/** Servers that are gone: nothing of them is on the host any more. */
const GONE = new Set(['DELETED', 'SOFT_DELETED']);

/** The VMs still on the node: Nova servers on its host (running or not), VMIs not final. */
export function guestsOn(world: World, node: string, opts: CheckOptions): string[] {
  const host = hostOfNode(world, node, opts);
  const servers = (world.nova?.servers ?? [])
    .filter((s) => host !== undefined && s.host === host && !GONE.has(s.status))
    .map((s) => `server ${s.name}`);
  const vmis = (world.vmis ?? [])
    .filter((v) => v.node === node && v.phase !== 'Succeeded' && v.phase !== 'Failed')
    .map((v) => `vmi ${v.namespace}/${v.name}`);
  return [...servers, ...vmis];
}

export const hasGate = (world: World, node: string): boolean =>
  world.gatePods.some((p) => isGatePodName(node, p.name) && !p.deleting) ||
  world.gatePdbs.some((p) => p.name === gateName(node));

/** No agent runs on the node and none will: no DaemonSet of drainer's places one there. */
export function noKeeper(world: World, n: WorldNode, opts: CheckOptions): boolean {
  if (!world.daemonSets?.length) return false;
  if (agentAlive(world, n.name, opts) !== false) return false;
  return !world.daemonSets.some((ds) => selectsNode(ds, n));
}

const keeperless = (world: World, n: WorldNode, opts: CheckOptions): boolean =>
  hasGate(world, n.name) && noKeeper(world, n, opts);

export function gatesWithoutKeeper(world: World, opts: CheckOptions): Violation[] {
  if (!opts.gate) return [];
  return world.nodes
    .filter((n) => keeperless(world, n, opts))
    .map((n) => {
      const object = `pod/${opts.namespace}/${gateName(n.name)}`;
      const why = `no agent runs on node ${n.name} and none will (no DaemonSet in ${opts.namespace} places one there${n.labels['drainer.dev/agent'] ? `: the node is labelled drainer.dev/agent=${n.labels['drainer.dev/agent']}` : ''})`;
      const guests = guestsOn(world, n.name, opts);
      if (!guests.length)
        return violation(
          'gate-without-keeper',
          object,
          `the drain gate of node ${n.name} is up, ${why}, and nothing is left on the node to protect: a drain of it waits until its timeout`,
          `the stopping agent should have dropped it; open it: \`drainer release --node ${n.name}\` (or \`kubectl -n ${opts.namespace} delete pdb ${gateName(n.name)}\`)`,
        );
      return violation(
        'vms-without-agent',
        object,
        `the drain gate of node ${n.name} holds for ${guests.join(', ')}, but ${why}: nobody moves them, and a drain waits until its timeout`,
        `put the agent back (\`kubectl label node ${n.name} drainer.dev/agent-\`), or move the VMs yourself and then \`drainer release --node ${n.name}\``,
      );
    });
}
