// The demo's hands on the node: cordon/uncordon through the API server as kubectl does (a
// strategic merge patch of spec.unschedulable), which node to pick, and "back in service".
import type { Sandbox } from '../sandbox/index.ts';
import { novaHostOf, Tracker, type Snapshot } from './tracker.ts';

export async function cordon(sb: Sandbox, node: string, on: boolean): Promise<void> {
  const res = await fetch(`${sb.kube.url}/api/v1/nodes/${encodeURIComponent(node)}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/strategic-merge-patch+json', accept: 'application/json' },
    body: JSON.stringify({ spec: { unschedulable: on ? true : null } }),
  });
  if (!res.ok)
    throw new Error(`${on ? 'cordon' : 'uncordon'} ${node}: HTTP ${res.status} ${await res.text()}`);
}

/** The first node holding Nova servers, VMIs and drainable pods (else the one holding the most). */
export function pickNode(sb: Sandbox): string {
  const scored = sb.scenario.nodes.map((n, order) => {
    const s = new Tracker(sb, n.name).snapshot();
    const nova = s.items.filter((i) => i.kind === 'nova').length;
    const kinds = [nova, s.items.length - nova, s.pods.total].filter((c) => c > 0).length;
    return { name: n.name, order, kinds, count: s.items.length + s.pods.total };
  });
  const full = scored.find((n) => n.kinds === 3);
  const best = full ?? scored.sort((a, b) => b.count - a.count || a.order - b.order)[0];
  if (!best) throw new Error('the scenario has no nodes');
  return best.name;
}

/** No record on the node, schedulable, and its nova-compute service enabled again. */
export function inService(sb: Sandbox, node: string, s: Snapshot): boolean {
  if (s.phase !== 'InService') return false;
  const obj = sb.kube.store.get('nodes', undefined, node) as { spec?: { unschedulable?: boolean } };
  if (obj.spec?.unschedulable) return false;
  const host = novaHostOf(sb, node);
  const service = host ? sb.openstack.state.service(host) : undefined;
  return !service || service.status === 'enabled';
}
