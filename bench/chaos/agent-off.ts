// A node without its agent: the operator took it off (drainer.dev/agent=disabled), gave such a node
// back into service, or the DaemonSet runs one there again. The soak keeps which nodes are off, and of
// them which kept a gate for VMs on them, to judge a drain's return the way the operator left the node.
import type { DrainKind } from './drains.ts';
import type { Fleet } from './fleet.ts';

/**
 * The DaemonSet runs an agent on the node again once the operator's drainer.dev/agent=disabled is
 * gone: taken off by `kubectl label`, or with the Node object itself (registered again without it).
 * Taken off with nothing on the node, it had no gate: the new agent makes one a moment later.
 */
export async function agentBack(fleet: Fleet, node: string): Promise<void> {
  if (agentTakenOffEmpty(fleet, node)) fleet.backFromOff.set(node, fleet.sandbox.clock.now());
  if (!fleet.disabled.delete(node)) return;
  fleet.offWithVms.delete(node);
  fleet.gateDeletedOff.delete(node);
  if (!fleet.agents.get(node)?.length) await fleet.startAgent(node);
}

/**
 * The operator took the node's agent off (drainer.dev/agent=disabled) with nothing on the node: its
 * stop dropped the gate, as it must, and no agent holds one there again. The host stays in service,
 * so Nova may place servers there (other evacuations' moves) and a drain then returns with them: the
 * operator's doing, like the findings operatorsOwnDoing leaves to them. Taken off with VMs on it, the
 * agent kept the gate for them, so a drain's return still answers to drainer's promise, unless the
 * operator then deleted that gate (gateDeletedWithoutAgent).
 */
export const agentTakenOffEmpty = (
  fleet: Pick<Fleet, 'disabled' | 'offWithVms' | 'gateDeletedOff'>,
  node: string,
): boolean => fleet.disabled.has(node) && (!fleet.offWithVms.has(node) || fleet.gateDeletedOff.has(node));

/**
 * The operator deleted the gate pod or PDB of a node whose agent it had taken off: no agent makes a
 * spare pod or a new PDB there (README: a deleted gate is the agent's to replace), so the node has no
 * gate that holds, and a drain then returns by the operator's hand, until an agent runs there again.
 */
export function gateDeletedWithoutAgent(
  fleet: Pick<Fleet, 'disabled' | 'gateDeletedOff'>,
  node: string,
): void {
  if (fleet.disabled.has(node)) fleet.gateDeletedOff.add(node);
}

/**
 * A drain that deletes pods (`kubectl drain --disable-eviction`: no PDB is asked) on a node whose
 * agent the operator took off deletes its gate pod as the operator's own delete would: its finalizer
 * keeps it Terminating, and no agent makes a spare (chaos seeds 3 and 5 at ba7be20; Karpenter then
 * skips a pod stuck terminating for over a minute).
 */
export function drainStarted(
  fleet: Pick<Fleet, 'disabled' | 'gateDeletedOff'>,
  node: string,
  kind: DrainKind,
): void {
  if (kind === 'disable-eviction') gateDeletedWithoutAgent(fleet, node);
}

/**
 * A node without its agent, as the operator leaves it: taking the agent off, or giving the node back
 * into service with no agent (`drainer restore --force`). With VMs on it then, a gate stays for them
 * (the stopping agent's, the restore's); with none, nobody keeps one there from then on (both drop a
 * gate no agent keeps on an empty host), and a drain that returns with VMs Nova placed there since is
 * the operator's doing (agentTakenOffEmpty).
 */
export function leftWithoutAgent(
  fleet: Pick<Fleet, 'disabled' | 'offWithVms'>,
  node: string,
  vms: readonly string[],
): void {
  if (!fleet.disabled.has(node)) return;
  if (vms.length) fleet.offWithVms.add(node);
  else fleet.offWithVms.delete(node);
}
