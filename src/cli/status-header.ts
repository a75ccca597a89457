// The header line of `drainer status`: may evacuations start now? The window state and the next
// opening (from this config's fleet.maintenanceWindows), active freezes, and the blockers firing:
// the fleet's Prometheus verdict (the drainer-blockers Lease, one GET) and the nodes a pod holds.
import type { FleetConfig } from '../config/schema.ts';
import { activeFreezes, nextStart } from '../core/fleet/calendar.ts';
import { parseVerdict, type Verdict } from '../core/fleet/shared-verdict.ts';
import { anyOpen, inText, localText, nextOpening } from '../core/fleet/window.ts';
import type { FleetRow } from '../core/fleet/fleet-view.ts';
import type { KubeLease } from '../kube/lease.ts';
import type { KubeClients } from '../kube/client.ts';
import { BLOCKERS_LEASE } from '../core/fleet/shared-verdict.ts';

export interface FleetGateView {
  readonly window: string;
  readonly freezes: readonly string[];
  readonly blockers: readonly string[];
}

/** The fleet's Prometheus verdict, if an agent has shared one (undefined: none, or not readable). */
export async function readVerdict(k: KubeClients, namespace: string): Promise<Verdict | undefined> {
  try {
    const l = await k.request<KubeLease>({
      path: `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases/${BLOCKERS_LEASE}`,
    });
    return parseVerdict(l.metadata.annotations);
  } catch {
    return undefined;
  }
}

export function gateView(
  fleet: Pick<FleetConfig, 'maintenanceWindows' | 'freezes'>,
  rows: readonly FleetRow[],
  verdict: Verdict | undefined,
  now: Date,
): FleetGateView {
  const t = now.getTime();
  const ws = fleet.maintenanceWindows;
  // this config may not be the agents': a node that waits for a window says so itself
  const held = rows.find((r) => r.waiting?.kind === 'window');
  let window = held?.waiting
    ? `closed (${held.node}: ${held.waiting.reason})`
    : 'always open (no maintenance windows)';
  if (ws.length && anyOpen(ws, t)) window = 'open';
  else if (ws.length) {
    const next = nextOpening(ws, t);
    window = next
      ? `closed, opens ${localText(next.at, next.window?.timeZone ?? 'UTC')} (in ${inText(next.at - t)})`
      : 'closed, no window opens';
  }
  const freezes = activeFreezes(fleet.freezes, t).map((f) => `${f.reason} until ${f.to}`);
  const start = nextStart({ ...fleet, windowEnd: 'finish-running' }, t);
  if (freezes.length && start !== undefined) freezes.push(`starts may resume in ${inText(start - t)}`);
  const frozen = rows.find((r) => r.waiting?.kind === 'freeze');
  if (!freezes.length && frozen?.waiting) freezes.push(`${frozen.node}: ${frozen.waiting.reason}`);
  const blockers: string[] = [];
  if (verdict?.error) blockers.push(`prometheus cannot be evaluated: ${verdict.error}`);
  else if (verdict?.firing.length) blockers.push(`prometheus: ${verdict.firing.join(', ')}`);
  const byPods = rows.filter((r) => r.waiting?.kind === 'pods').map((r) => r.node);
  if (byPods.length) blockers.push(`pods hold ${byPods.join(', ')}`);
  return { window, freezes, blockers };
}

/** "window: closed, opens Sat 02:00 Europe/Berlin (in 9 h 12 min) · freezes: none · blockers: none" */
export const headerLine = (v: FleetGateView): string =>
  `window: ${v.window} · freezes: ${v.freezes.length ? v.freezes.join('; ') : 'none'} · blockers: ${
    v.blockers.length ? v.blockers.join('; ') : 'none firing'
  }`;
