// How `drainer status` prints the fleet: an aligned table for people, JSON or YAML for scripts.
import yaml from 'js-yaml';
import { copyText } from '../core/copy-text.ts';
import type { FleetRow } from '../core/fleet-view.ts';
import { renderTable } from './output-table.ts';
import { headerLine, type FleetGateView } from './status-header.ts';

/** `wide`: the table with the whole last error (and whether the node opts out). */
export type StatusOutput = 'table' | 'wide' | 'json' | 'yaml';

const ERROR_COLUMN = 80;

/** 42s, 3m12s, 2h5m, 3d4h: the age of a phase, as kubectl prints ages. */
export function age(fromIso: string, now: Date): string {
  const from = Date.parse(fromIso);
  if (Number.isNaN(from)) return '?';
  let s = Math.max(0, Math.floor((now.getTime() - from) / 1000));
  if (s < 60) return `${s}s`;
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  s %= 60;
  if (d > 0) return `${d}d${h}h`;
  if (h > 0) return `${h}h${m}m`;
  return `${m}m${s}s`;
}

const slotOrQueue = (r: FleetRow): string =>
  r.slot ?? (r.queuePosition !== undefined ? `queue #${r.queuePosition}` : '');

const progressText = (r: FleetRow): string =>
  Object.entries(r.progress)
    .map(([plugin, p]) => {
      const copies = (p.copies ?? []).map((c) => `; ${c.name} ${copyText(c)}`).join('');
      return `${plugin} ${p.moved}/${p.total}${p.failed ? ` (${p.failed} failed)` : ''}${copies}`;
    })
    .join(', ');

/** alive, gone 4m12s (record may be stale), or blank where no Lease was read. */
const agentText = (r: FleetRow, now: Date): string =>
  !r.agent
    ? ''
    : r.agent.alive
      ? 'alive'
      : `gone ${r.agent.goneSince ? age(r.agent.goneSince, now) : '?'} (record may be stale)`;

const oneLine = (text: string | undefined, whole: boolean): string => {
  const t = (text ?? '').replace(/\s+/g, ' ');
  return !whole && t.length > ERROR_COLUMN ? `${t.slice(0, ERROR_COLUMN - 1)}… (-o wide shows it all)` : t;
};

const sinceText = (r: FleetRow, now: Date): string =>
  r.phase === 'Ignored' ? '' : age(r.phase === 'Queued' ? (r.queuedAt ?? r.since) : r.since, now);

export function renderStatus(
  rows: readonly FleetRow[],
  output: StatusOutput,
  now: Date,
  gate?: FleetGateView,
): string {
  const doc = { ...(gate ? { fleet: gate } : {}), nodes: rows };
  if (output === 'json') return `${JSON.stringify(doc, null, 2)}\n`;
  if (output === 'yaml') return yaml.dump(doc, { lineWidth: 120 });
  const header = gate ? `${headerLine(gate)}\n` : '';
  if (rows.length === 0) return `${header}no node has a drainer record: every node is in service\n`;
  const wide = output === 'wide';
  // the AGENT column only where some row has an agent Lease (none read, or an older agent holds none)
  const agents = rows.some((r) => r.agent);
  return (
    header +
    renderTable(
      [
        'NODE',
        'PHASE',
        'TRIGGER',
        'SINCE',
        'SLOT/QUEUE',
        'PROGRESS',
        'DRAIN GATE',
        ...(agents ? ['AGENT'] : []),
        'LAST ERROR',
      ],
      rows.map((r) => [
        r.node,
        r.ignored && r.phase !== 'Ignored' ? `${r.phase} (ignored)` : r.phase,
        r.trigger,
        sinceText(r, now),
        slotOrQueue(r),
        progressText(r),
        r.phase === 'Ignored' || r.stranded ? '' : oneLine(r.gate ?? 'off', wide),
        ...(agents ? [agentText(r, now)] : []),
        oneLine(r.lastError ?? (r.waiting ? `waiting: ${r.waiting.reason}` : undefined), wide),
      ]),
    )
  );
}
