// How `drainer status` prints the fleet: an aligned table for people, JSON or YAML for scripts.
import yaml from 'js-yaml';
import { copyText, memoryText } from '../core/backends/copy-text.ts';
import type { FleetRow } from '../core/fleet/fleet-view.ts';
import { renderTable } from '../output/table.ts';
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

/** The plugins in one order on every row (the record keeps them in the order they first wrote). */
const PLUGIN_ORDER = ['nova', 'kubevirt'];
const rank = (plugin: string): number => {
  const i = PLUGIN_ORDER.indexOf(plugin);
  return i < 0 ? PLUGIN_ORDER.length : i;
};

const progressText = (r: FleetRow): string =>
  Object.entries(r.progress)
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([plugin, p]) => {
      const copies = (p.copies ?? []).map((c) => `; ${c.name} ${copyText(c)}`).join('');
      const memory = memoryText(p);
      return `${plugin} ${p.moved}/${p.total}${p.failed ? ` (${p.failed} failed)` : ''}${memory ? `, ${memory}` : ''}${copies}`;
    })
    .join(', ');

/** alive, gone 4m12s (record may be stale), or blank where no Lease was read. */
const agentText = (r: Pick<FleetRow, 'agent'>, now: Date): string =>
  !r.agent
    ? ''
    : r.agent.alive
      ? 'alive'
      : `gone ${r.agent.goneSince ? age(r.agent.goneSince, now) : '?'} (record may be stale)`;

/** Cut to the column at a word's end, so a VM's name is shown whole or not at all. */
const oneLine = (text: string | undefined, whole: boolean): string => {
  const t = (text ?? '').replace(/\s+/g, ' ');
  if (whole || t.length <= ERROR_COLUMN) return t;
  const cut = t.slice(0, ERROR_COLUMN - 1);
  const end = Math.max(cut.lastIndexOf(' '), cut.lastIndexOf(','), cut.lastIndexOf(';'));
  const kept = end > ERROR_COLUMN / 2 ? cut.slice(0, end) : cut;
  return `${kept.replace(/[\s,;:(]+$/, '')}… (-o wide shows it all)`;
};

const lastColumn = (r: FleetRow, rows: readonly FleetRow[]): string | undefined => {
  if (r.lastError) return r.lastError;
  if (r.waiting) return `waiting: ${r.waiting.reason}`;
  const q = queueReason(r, rows);
  return q ? `waiting ${q}` : undefined;
};

const sinceText = (r: FleetRow, now: Date): string =>
  r.phase === 'Ignored' || !r.since ? '' : age(r.phase === 'Queued' ? (r.queuedAt ?? r.since) : r.since, now);

/**
 * Why a Queued node without a calendar or blocker reason waits: for a fleet slot, held by whom,
 * and who is ahead of it in the queue (with their own reasons).
 */
export function queueReason(r: FleetRow, rows: readonly FleetRow[]): string | undefined {
  if (r.phase !== 'Queued' || r.waiting || r.lastError) return undefined;
  const holders = rows.filter((x) => x.slot).map((x) => x.node);
  const mine = r.queuePosition ?? Number.POSITIVE_INFINITY;
  const ahead = rows
    .filter((x) => x.queuePosition !== undefined && x.queuePosition < mine)
    .map((x) => (x.waiting ? `${x.node} (held: ${x.waiting.kind})` : x.node));
  const slot = holders.length ? `for a slot held by ${holders.join(', ')}` : 'for a slot';
  return `${slot}${ahead.length ? `; behind ${ahead.join(', ')}` : ''}`;
}

/** A node in service whose agent holds its Lease: shown so a fresh install can be checked (AGENT alive). */
export interface InServiceAgent {
  readonly node: string;
  readonly agent: NonNullable<FleetRow['agent']>;
}

export function renderStatus(
  rows: readonly FleetRow[],
  output: StatusOutput,
  now: Date,
  gate?: FleetGateView,
  idle: readonly InServiceAgent[] = [],
  empty = '',
  config?: string,
): string {
  const doc = {
    ...(gate ? { fleet: gate } : {}),
    nodes: rows,
    ...(idle.length ? { inService: idle } : {}),
    ...(config ? { config } : {}),
  };
  if (output === 'json') return `${JSON.stringify(doc, null, 2)}\n`;
  if (output === 'yaml') return yaml.dump(doc, { lineWidth: 120 });
  const header = gate ? `${headerLine(gate)}\n` : '';
  const footer = config ? `config: ${config}\n` : '';
  // nothing to list: the caller says what that means (it depends on what could be read)
  if (rows.length === 0 && idle.length === 0) return `${header}${empty ? `${empty}\n` : ''}${footer}`;
  const wide = output === 'wide';
  // the AGENT column only where some row has an agent Lease (none read, or an older agent holds none)
  const agents = rows.some((r) => r.agent) || idle.length > 0;
  const cells = (r: FleetRow): string[] => [
    r.node,
    r.ignored && r.phase !== 'Ignored' ? `${r.phase} (ignored)` : r.phase,
    r.trigger,
    sinceText(r, now),
    slotOrQueue(r),
    progressText(r),
    r.phase === 'Ignored' || r.stranded ? '' : oneLine(r.gate ?? 'off', wide),
    ...(agents ? [agentText(r, now)] : []),
    oneLine(lastColumn(r, rows), wide),
  ];
  // in service: no record, so no phase, progress or gate state of drainer's to show
  const idleCells = (i: InServiceAgent): string[] => [
    i.node,
    'InService',
    '',
    '',
    '',
    '',
    '',
    agentText({ agent: i.agent }, now),
    '',
  ];
  const table = [
    ...rows.map((r) => ({ node: r.node, cells: cells(r) })),
    ...idle.map((i) => ({ node: i.node, cells: idleCells(i) })),
  ].sort((a, b) => a.node.localeCompare(b.node));
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
      table.map((t) => t.cells),
    ) +
    footer
  );
}
