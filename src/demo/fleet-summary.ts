// The fleet act's closing lines: per node how long it waited Queued and behind whom, how long it
// then evacuated and what moved; the most nodes Evacuating at once against the budget.
import { renderTable } from '../output/table.ts';
import type { FleetReport } from './fleet-report.ts';
import { secs } from './render.ts';
import type { FleetTurn } from './timeline.ts';

const queued = (t: FleetTurn): string =>
  t.queuedMs === undefined
    ? '-'
    : `${secs(t.queuedMs)}${t.behind.length ? ` behind ${t.behind.join(', ')}` : ''}`;

export function renderFleetSummary(r: FleetReport): string {
  const rows = r.turns.map((t) => {
    const items = r.items[t.node] ?? [];
    const moved = items.filter((i) => i.state === 'moved').length;
    const to = [...new Set(items.flatMap((i) => (i.target ? [i.target] : [])))].join(', ') || '-';
    return [
      t.node,
      queued(t),
      t.evacuatingMs === undefined ? '-' : secs(t.evacuatingMs),
      `${moved}/${items.length} → ${to}`,
      t.reached,
    ];
  });
  const waits = r.turns
    .filter((t) => t.queuedMs !== undefined && t.behind.length > 0)
    .map((t) => `${t.node} queued ${queued(t)}, then evacuated in ${secs(t.evacuatingMs ?? 0)}`);
  const ev = r.evacuation;
  return [
    '',
    `Fleet summary (fleet.maxConcurrentEvacuations: ${r.budget})`,
    renderTable(['NODE', 'QUEUED', 'EVACUATING', 'SERVERS MOVED', 'RESULT'], rows),
    ...waits,
    `most nodes Evacuating at once: ${r.maxEvacuating}`,
    `fleet: ${ev.reached} after ${secs(ev.simMs)} simulated (${secs(ev.realMs)} real); ` +
      `${r.restore.reached === 'InService' ? 'back in service' : `not back in service (${r.restore.reached})`} ` +
      `after ${secs(r.restore.simMs)} simulated`,
    '',
  ].join('\n');
}
