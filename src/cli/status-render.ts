// How `drainer status` prints the fleet: an aligned table for people, JSON or YAML for scripts.
import yaml from 'js-yaml';
import { copyText, etaText, memoryText } from '../core/backends/copy-text.ts';
import type { FleetRow } from '../core/fleet/fleet-view.ts';
import { renderTable } from '../output/table.ts';
import { headerLine, type FleetGateView } from './status-header.ts';

/**
 * `table` fits an ordinary terminal: short forms, and a row's long text (its last error, what it waits
 * for, why its gate does not hold) on an indented line under it. `wide`: every column, every text whole.
 */
export type StatusOutput = 'table' | 'wide' | 'json' | 'yaml';

/** The width of an ordinary terminal: no line of the table is wider. */
const TERMINAL = 120;
const MORE = '… (-o wide shows it all)';

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

/** The slot's Lease name in wide, its number in the table (`slot 0` for drainer-evacuation-0). */
const slotOrQueue = (r: FleetRow, wide: boolean): string =>
  r.slot
    ? wide
      ? r.slot
      : r.slot.replace(/^drainer-evacuation-(\d+)$/, 'slot $1')
    : r.queuePosition !== undefined
      ? `queue #${r.queuePosition}`
      : '';

/** The plugins in one order on every row (the record keeps them in the order they first wrote). */
const PLUGIN_ORDER = ['nova', 'kubevirt'];
const rank = (plugin: string): number => {
  const i = PLUGIN_ORDER.indexOf(plugin);
  return i < 0 ? PLUGIN_ORDER.length : i;
};

/** The drain step's part: `pods 4/10 evicted`, with those that failed. */
const podsText = (r: FleetRow): string[] =>
  r.pods
    ? [`pods ${r.pods.evicted}/${r.pods.total} evicted${r.pods.failed ? ` (${r.pods.failed} failed)` : ''}`]
    : [];

/** Wide: `nova 3/10, 14 GiB left, ETA ~4m; vm-1 62 % (…)`; the table: `nova 3/10 ETA ~4m`. */
const progressText = (r: FleetRow, wide: boolean): string =>
  [
    ...Object.entries(r.progress)
      .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
      .map(([plugin, p]) => {
        const counts = `${plugin} ${p.moved}/${p.total}${p.failed ? ` (${p.failed} failed)` : ''}`;
        if (!wide) return [counts, etaText(p)].filter(Boolean).join(' ');
        const copies = (p.copies ?? []).map((c) => `; ${c.name} ${copyText(c)}`).join('');
        const memory = memoryText(p);
        return `${counts}${memory ? `, ${memory}` : ''}${copies}`;
      }),
    ...podsText(r),
  ].join(', ');

/** alive, gone 4m12s (wide: and that its record may be stale), or blank where no Lease was read. */
const agentText = (r: Pick<FleetRow, 'agent'>, now: Date, wide: boolean): string =>
  !r.agent
    ? ''
    : r.agent.alive
      ? 'alive'
      : `gone ${r.agent.goneSince ? age(r.agent.goneSince, now) : '?'}${wide ? ' (record may be stale)' : ''}`;

/** The gate's first clause in the table: `held`, `not held`, `released`. */
const gateText = (r: FleetRow, wide: boolean): string => {
  if (r.phase === 'Ignored' || r.stranded) return '';
  const gate = r.gate ?? 'off';
  return wide ? gate : (gate.split(/:| \(/)[0] ?? gate);
};

/** Cut to `width` at a word's end, so a VM's name is shown whole or not at all. */
export const cutText = (text: string, width: number): string => {
  const t = text.replace(/\s+/g, ' ');
  if (t.length <= width) return t;
  const room = Math.max(1, width - MORE.length);
  const cut = t.slice(0, room + 1);
  const end = Math.max(cut.lastIndexOf(' '), cut.lastIndexOf(','), cut.lastIndexOf(';'));
  const kept = end > room / 2 ? cut.slice(0, end) : cut.slice(0, room);
  return `${kept.replace(/[\s,;:(]+$/, '')}${MORE}`;
};

/** Words laid on lines of `width`, the later ones indented by `indent` (the footer). */
const wrap = (text: string, width: number, indent: number): string[] => {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = `${' '.repeat(indent)}${word}`;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
};

/** The table's line under a row: its last error or what it waits for, else why its gate says what it does. */
const noteText = (r: FleetRow, rows: readonly FleetRow[]): string | undefined => {
  if (r.lastError) return `last error: ${r.lastError}`;
  const last = lastColumn(r, rows);
  if (last) return last;
  const gate = gateText(r, true);
  return gate.includes(':') ? `drain gate ${gate}` : undefined;
};

const lastColumn = (r: FleetRow, rows: readonly FleetRow[]): string | undefined => {
  if (r.lastError) return r.lastError;
  if (r.waiting) return `waiting: ${r.waiting.reason}`;
  const q = queueReason(r, rows);
  return q ? `waiting ${q}` : undefined;
};

/** A Queued node's age in the queue: by the API server's clock where the record has it (queueStamp). */
const sinceText = (r: FleetRow, now: Date): string => {
  if (r.phase === 'Ignored' || !r.since) return '';
  if (r.phase !== 'Queued') return age(r.since, now);
  return age(
    r.queueStamp !== undefined ? new Date(r.queueStamp).toISOString() : (r.queuedAt ?? r.since),
    now,
  );
};

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
  // the footer's sentence on lines that fit the terminal (wide: on one)
  const footer = config
    ? `${(output === 'wide' ? [`config: ${config}`] : wrap(`config: ${config}`, TERMINAL, 8)).join('\n')}\n`
    : '';
  // nothing to list: the caller says what that means (it depends on what could be read)
  if (rows.length === 0 && idle.length === 0) return `${header}${empty ? `${empty}\n` : ''}${footer}`;
  const wide = output === 'wide';
  // the AGENT column only where some row has an agent Lease (none read, or an older agent holds none)
  const agents = rows.some((r) => r.agent) || idle.length > 0;
  const flat = (t: string | undefined): string => (t ?? '').replace(/\s+/g, ' ');
  const cells = (r: FleetRow): string[] => [
    r.node,
    r.ignored && r.phase !== 'Ignored' ? `${r.phase} (ignored)` : r.phase,
    ...(wide ? [r.trigger] : []),
    sinceText(r, now),
    slotOrQueue(r, wide),
    progressText(r, wide),
    flat(gateText(r, wide)),
    ...(agents ? [agentText(r, now, wide)] : []),
    ...(wide ? [flat(lastColumn(r, rows))] : []),
  ];
  // in service: no record, so no phase, progress or gate state of drainer's to show
  const idleCells = (i: InServiceAgent): string[] => [
    i.node,
    'InService',
    ...(wide ? [''] : []),
    '',
    '',
    '',
    '',
    agentText({ agent: i.agent }, now, wide),
    ...(wide ? [''] : []),
  ];
  const table = [
    ...rows.map((r) => ({ node: r.node, cells: cells(r), note: wide ? undefined : noteText(r, rows) })),
    ...idle.map((i) => ({ node: i.node, cells: idleCells(i), note: undefined })),
  ].sort((a, b) => a.node.localeCompare(b.node));
  const columns = [
    'NODE',
    'PHASE',
    ...(wide ? ['TRIGGER'] : []),
    'SINCE',
    'SLOT/QUEUE',
    'PROGRESS',
    'DRAIN GATE',
    ...(agents ? ['AGENT'] : []),
    ...(wide ? ['LAST ERROR'] : []),
  ];
  const [head = '', ...lines] = renderTable(
    columns,
    table.map((t) => t.cells),
  ).split('\n');
  // a row's long text goes under it, from the PHASE column on, cut to the terminal
  const indent = Math.max(4, ...table.map((t) => t.node.length)) + 2;
  const body = table.flatMap((t, n) => [
    lines[n] ?? '',
    ...(t.note ? [`${' '.repeat(indent)}${cutText(t.note, TERMINAL - indent)}`] : []),
  ]);
  return `${header}${[head, ...body].join('\n')}\n${footer}`;
}
