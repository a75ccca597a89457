// Nothing evicts or deletes a node's drain gate pod while a server or VMI of the node is on it.
// Needs the API server's answered requests (an observation); where they were not observed, says nothing.
// A delete that finalizers hold is no removal: the pod stays, and kubectl drain waits until it is gone.
// What is judged is the moment the pod really goes: where the log says which request took it away
// (removed), that request, be it the delete, the eviction or the PATCH that dropped the last finalizer.
import { GATE_PREFIX, isGatePodName } from '../../kube/gate.ts';
import { REBOOT_KEY } from '../../names.ts';
import { hostOfNode, serverHostAt, vmiNodeAt } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, ObservedRequest, World, WorldServer } from '../world.ts';

/** Kubernetes times (a migration's endTimestamp) are whole seconds. */
const STAMP_MS = 1000;

const METHOD_HOW: Readonly<Record<string, string>> = {
  DELETE: 'deleted',
  PATCH: 'finalizer dropped',
  PUT: 'finalizer dropped',
};

const GATE_POD = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/?]+?)(\/eviction)?(?:\?.*)?$/;

/** The node whose gate pod (its own or the spare) has this name: the node it was bound to, where known. */
const nodeOfGatePod = (world: World, name: string, r: ObservedRequest): string =>
  r.podNode ?? world.nodes.find((n) => isGatePodName(n.name, name))?.name ?? name.slice(GATE_PREFIX.length);

/** The node of a request that took the gate pod away (an admitted eviction or a delete), if it is one. */
function disruptedGate(
  world: World,
  r: ObservedRequest,
  namespace: string,
): { node: string; pod: string; how: string } | undefined {
  const m = GATE_POD.exec(r.path);
  if (!m || decodeURIComponent(m[1] ?? '') !== namespace) return undefined;
  const name = decodeURIComponent(m[2] ?? '');
  if (!name.startsWith(GATE_PREFIX)) return undefined;
  const node = nodeOfGatePod(world, name, r);
  const pod = name;
  if (r.removed) return { node, pod, how: m[3] ? 'evicted' : (METHOD_HOW[r.method] ?? r.method) };
  // a finalizer keeps the pod (drainer's own while VMs remain): a drain still waits for it to go
  if (r.heldBy?.length) return undefined;
  if (m[3] && r.method === 'POST' && (r.status === 200 || r.status === 201))
    return { node, pod, how: 'evicted' };
  if (!m[3] && r.method === 'DELETE' && (r.status === 200 || r.status === 202))
    return { node, pod, how: 'deleted' };
  return undefined;
}

/** Does the node's maintenance declare a reboot (drainer.dev/reboot, annotation or label)? */
const declaresReboot = (world: World, node: string): boolean => {
  const n = world.nodes.find((x) => x.name === node);
  return (n?.annotations[REBOOT_KEY] ?? n?.labels[REBOOT_KEY]) === 'true';
};

/**
 * Was the server stopped at time t? Its last power change before t, where they were observed
 * (a restore may have started it again since); otherwise its status now.
 */
function stoppedAt(world: World, s: WorldServer, t: number): boolean {
  const changes = world.observations?.powerChanges?.filter((c) => c.serverId === s.id);
  if (!changes?.length) return s.status === 'SHUTOFF';
  const before = changes.filter((c) => c.at <= t).at(-1);
  return before ? before.to === 'stopped' : changes[0]?.to === 'running';
}

/** What of the node's VMs ran on it at time t, by name. */
function onNodeAt(world: World, node: string, t: number, opts: CheckOptions): string[] {
  const host = hostOfNode(world, node, opts);
  // a server stopped on the host for a declared reboot stays there by design: the gate opens for it
  const stoppedMayStay = declaresReboot(world, node);
  const servers = host
    ? (world.nova?.servers ?? [])
        .filter((s) => serverHostAt(world, s.id, t) === host)
        .filter((s) => !(stoppedMayStay && stoppedAt(world, s, t)))
        .map((s) => `server ${s.name}`)
    : [];
  // a VMI whose eviction strategy is None stops when its launcher pod is evicted: the taker's drain
  // ends it, so it is not on the host when that drain returns
  const vmis = (world.vmis ?? [])
    .filter((v) => v.evictionStrategy !== 'None')
    // one that ended or is being deleted runs no guest (a drain that deletes pods kills its launcher)
    .filter((v) => v.phase !== 'Succeeded' && v.phase !== 'Failed' && !v.deleting)
    // a migration's endTimestamp is whole seconds: on the node only if it was for any end in that second
    .filter((v) => [t, t - STAMP_MS + 1].every((at) => vmiNodeAt(world, v.namespace, v.name, at) === node))
    .map((v) => `VMI ${v.namespace}/${v.name}`);
  return [...servers, ...vmis];
}

/**
 * An operator's `drainer release` opens the gate with VMs left on purpose (its Event says so): the
 * documented override, not a broken promise, for the maintenance it was given in. Where the releases
 * were observed with their spans, only a removal inside one is excused; otherwise the Event carries
 * no time we can compare, and a release excuses every removal of that node's gate in the observed span.
 */
function releasedByOperator(world: World, node: string, at: number): boolean {
  const spans = world.observations?.releases;
  if (spans) return spans.some((s) => s.node === node && s.from <= at && at <= (s.until ?? Infinity));
  return world.events.some(
    (e) => e.reason === 'DrainGateReleased' && e.name === node && e.message.includes('by an operator'),
  );
}

export function gateDisruptedWhileOccupied(world: World, opts: CheckOptions): Violation[] {
  const out: Violation[] = [];
  for (const r of world.observations?.requests ?? []) {
    const hit = disruptedGate(world, r, opts.namespace);
    if (!hit || (hit.how !== 'evicted' && releasedByOperator(world, hit.node, r.at))) continue;
    const left = onNodeAt(world, hit.node, r.at, opts);
    if (!left.length) continue;
    const who = r.userAgent ? ` by ${r.userAgent}` : '';
    out.push(
      violation(
        'gate-disrupted-while-occupied',
        `pod/${opts.namespace}/${hit.pod}`,
        `${r.method} ${r.path} answered ${r.status}${who} at ${new Date(r.at).toISOString()} (gate ${hit.how}) while ${left.length} VM(s) were on node ${hit.node}: ${left.slice(0, 5).join(', ')}`,
        `the gate must be put back at once (the agent re-creates it while VMs remain); a drain that returned meanwhile did so with VMs on node ${hit.node}: check them before the node is powered off`,
      ),
    );
  }
  return out;
}
