// Every gate drainer calls held exists and holds: its PDB (status about the current spec) allows 0
// disruptions and its pod is Running and Ready on the node. And no gate is left for a Node that is gone.
import { gateHeld } from '../../core/gate/step.ts';
import { gateName, isGatePodName, legacyGateNames } from '../../kube/gate.ts';
import { agentAlive } from '../agents.ts';
import { recordOf } from '../hosts.ts';
import { guestsOn, noKeeper } from './gate-keeper.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World, WorldNode } from '../world.ts';

const HELD_METRIC = /^drainer_drain_gate_held(?:\{[^}]*\})?\s+(\S+)/m;

/** Why drainer says the node's gate is held (status, metric, an agent in service), if it does. */
function heldClaim(world: World, n: WorldNode, opts: CheckOptions): string | undefined {
  const metric = world.observations?.metrics?.[n.name];
  const value = metric ? HELD_METRIC.exec(metric)?.[1] : undefined;
  if (value !== undefined) return Number(value) === 1 ? 'drainer_drain_gate_held is 1' : undefined;
  const rec = recordOf(n);
  // no agent keeps the gate and none will, and nothing is on the node: its stopping agent drops it
  // (gate-keeper.ts asks exactly that), whatever its record wants
  if (rec && noKeeper(world, n, opts) && !guestsOn(world, n.name, opts).length) return undefined;
  if (rec)
    return gateHeld(rec, { metadata: { annotations: n.annotations } })
      ? `drainer status says held (phase ${rec.phase})`
      : undefined;
  if (n.record.kind === 'absent' && agentAlive(world, n.name, opts))
    return 'the node is in service with a live agent, which holds its gate';
  return undefined;
}

function problems(world: World, node: string): { missing: string[]; weak: string[] } {
  const name = gateName(node);
  // the node's own pod, or a spare (-b, -b2 …) made while the ones before are being deleted: the one that guards
  const pods = world.gatePods.filter((p) => isGatePodName(node, p.name));
  const pod = pods.find((p) => !p.deleting) ?? pods[0];
  const pdb = world.gatePdbs.find((p) => p.name === name);
  const missing: string[] = [];
  const weak: string[] = [];
  if (!pdb) missing.push(`no PodDisruptionBudget ${name}`);
  else if (!pdb.observed) weak.push(`PDB ${name} status not yet observed for its spec`);
  else if (pdb.disruptionsAllowed !== 0)
    weak.push(`PDB ${name} allows ${pdb.disruptionsAllowed ?? '?'} disruption(s)`);
  if (!pod || pod.deleting)
    missing.push(
      pod
        ? `pod ${pods.map((p) => p.name).join(', ')} ${pods.length > 1 ? 'are' : 'is'} being deleted`
        : `no pod ${name}`,
    );
  else {
    if (pod.nodeName !== node) weak.push(`pod ${pod.name} is bound to ${pod.nodeName || 'no node'}`);
    if (pod.phase !== 'Running' || !pod.ready)
      weak.push(
        `pod ${pod.name} is ${pod.phase ?? 'Unknown'}${pod.ready ? '' : ', not Ready'} (the eviction API skips the PDB for it)`,
      );
  }
  return { missing, weak };
}

export function gatesHold(world: World, opts: CheckOptions): Violation[] {
  if (!opts.gate) return [];
  const out: Violation[] = [];
  for (const n of world.nodes) {
    const claim = heldClaim(world, n, opts);
    if (!claim) continue;
    const { missing, weak } = problems(world, n.name);
    const object = `pod/${opts.namespace}/${gateName(n.name)}`;
    if (missing.length)
      out.push(
        violation(
          'gate-missing',
          object,
          `${claim}, but ${missing.join('; ')}: a drain of node ${n.name} would not wait`,
          `the node's agent re-creates its gate; if it has none (see record-without-agent), \`drainer restore --node ${n.name}\` re-arms it, or do not drain the node until its VMs have left`,
        ),
      );
    else if (weak.length)
      out.push(
        violation(
          'gate-not-holding',
          object,
          `${claim}, but ${weak.join('; ')}`,
          `\`kubectl -n ${opts.namespace} describe pod ${gateName(n.name)}\` (image pull, scheduling); a drain now would not wait for the VMs`,
        ),
      );
  }
  return out;
}

/** Gate objects for Nodes that no longer exist. */
export function leftoverGates(world: World, opts: CheckOptions): Violation[] {
  // an older version's names too: its gate goes once the upgraded agent's own holds
  const owned = new Set(world.nodes.flatMap((n) => [gateName(n.name), ...legacyGateNames(n.name)]));
  const names = new Set([...world.gatePods.map((p) => p.name), ...world.gatePdbs.map((p) => p.name)]);
  return [...names]
    .filter((name) => !owned.has(name) && !world.nodes.some((n) => isGatePodName(n.name, name)))
    .map((name) =>
      violation(
        'leftover-gate',
        `poddisruptionbudget/${opts.namespace}/${name}`,
        `gate objects ${name} (${world.gatePods.some((p) => p.name === name) ? 'pod and ' : ''}${world.gatePdbs.some((p) => p.name === name) ? 'PDB' : 'no PDB'}) for a Node that does not exist`,
        `\`kubectl -n ${opts.namespace} delete pdb,pod ${name}\` (nothing to guard: the node is gone)`,
      ),
    );
}
