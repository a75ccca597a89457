// The demo's closing table: what moved where and how long it took, the two phases' durations, and
// the API calls the agents made (from the sandbox's own request logs).
import { renderTable } from '../output/table.ts';
import type { NodeRecord } from '../core/record/record.ts';
import type { Sandbox } from '../sandbox/index.ts';
import type { RequestLogEntry } from '../sandbox/openstack/index.ts';
import { kubeCall, openstackCall, tally } from './api-calls.ts';
import type { FleetReport, PhaseResult } from './fleet-report.ts';
import type { DrainActReport } from './drain-act.ts';
import { stateText, took } from './render.ts';
import type { PodProgress, TrackedItem } from './tracker.ts';

export type { PhaseResult } from './fleet-report.ts';

/** The phase reached, and the simulated and real time since `t0` (the cordon or uncordon). */
export const phaseResult = (
  reached: string,
  sb: Sandbox,
  t0: { sim: number; real: number },
): PhaseResult => ({
  reached,
  simMs: sb.clock.now() - t0.sim,
  realMs: Date.now() - t0.real,
});

export interface DemoReport {
  readonly node: string;
  readonly scale: number;
  readonly evacuation: PhaseResult & { readonly record: NodeRecord | undefined };
  readonly restore: PhaseResult | undefined;
  readonly items: readonly TrackedItem[];
  readonly pods: PodProgress;
  /** "verb resource" → count, largest first. */
  readonly kubeCalls: readonly [string, number][];
  /** "service METHOD /template" → count, largest first. */
  readonly openstackCalls: readonly [string, number][];
  /** The fleet act (unless skipped). */
  readonly fleet?: FleetReport;
  /** The drain act (unless skipped). */
  readonly drain?: DrainActReport;
  readonly realMs: number;
  /** Evacuated, then back in service; and so was the fleet. */
  readonly ok: boolean;
}

/** The first act: one node, what moved where, and the API calls. */
export type ActReport = Omit<DemoReport, 'fleet' | 'drain' | 'realMs' | 'ok'>;

export function countCalls(
  kube: readonly { method: string; path: string }[],
  os: readonly RequestLogEntry[],
) {
  const kubeCalls = tally(kube, (r) => {
    const c = kubeCall(r.method, r.path);
    return c ? `${c.verb} ${c.group ? `${c.resource}.${c.group}` : c.resource}` : 'discovery';
  });
  const openstackCalls = tally(os, (r) => {
    const c = openstackCall(r.method, r.path);
    return `${c.service} ${c.what}`;
  });
  return { kubeCalls, openstackCalls };
}

const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const sum = (rows: readonly [string, number][], prefix = ''): number =>
  rows.filter(([k]) => k.startsWith(prefix)).reduce((n, [, c]) => n + c, 0);

function itemRows(items: readonly TrackedItem[], now: number): string[][] {
  return items.map((i) => [
    i.kind,
    i.name,
    i.source,
    i.state === 'moved' ? (i.target ?? '?') : '-',
    took(i, now) || '-',
    String(i.attempts),
    stateText(i),
  ]);
}

function callLines(title: string, rows: readonly [string, number][], top = 6): string {
  const total = sum(rows);
  const shown = rows.slice(0, top).map(([k, n]) => `${k} ×${n}`);
  const more = rows.length > top ? `, … ${rows.length - top} more kinds` : '';
  return `${title}: ${total} request${total === 1 ? '' : 's'} (${shown.join(', ')}${more})`;
}

export function renderSummary(r: ActReport): string {
  const out: string[] = ['', 'Summary'];
  const end = r.items.reduce((m, i) => Math.max(m, i.endedAt ?? 0), 0);
  const rows = itemRows(r.items, end);
  const drained = r.pods.evicted === r.pods.total;
  rows.push([
    'pods',
    `${r.pods.evicted}/${r.pods.total} evicted`,
    r.node,
    drained ? 'elsewhere' : '-',
    '-',
    '-',
    drained ? 'drained' : 'not drained',
  ]);
  out.push(renderTable(['PLUGIN', 'WORKLOAD', 'FROM', 'TO', 'TOOK', 'ATTEMPTS', 'RESULT'], rows));
  const ev = r.evacuation;
  out.push(
    `evacuation: ${ev.reached} after ${s(ev.simMs)} simulated (${s(ev.realMs)} real, clock ×${r.scale})`,
  );
  if (ev.record?.lastError) out.push(`  last error: ${ev.record.lastError}`);
  for (const o of ev.record?.outcomes ?? []) {
    if (!o.succeeded) out.push(`  ${o.plugin}: ${o.message ?? `${o.failed} workload(s) did not move`}`);
  }
  if (r.restore) {
    out.push(
      `back in service: ${r.restore.reached === 'InService' ? 'yes' : `no (${r.restore.reached})`} after ${s(r.restore.simMs)} simulated (${s(r.restore.realMs)} real)`,
    );
  }
  const nova = r.openstackCalls.filter(([k]) => k.startsWith('nova '));
  const keystone = r.openstackCalls.filter(([k]) => k.startsWith('keystone '));
  const placement = r.openstackCalls.filter(([k]) => k.startsWith('placement '));
  out.push(
    callLines('Kubernetes API', r.kubeCalls),
    callLines('Nova', nova),
    ...(placement.length ? [callLines('Placement', placement)] : []),
    callLines('Keystone', keystone),
    '',
  );
  return out.join('\n');
}

/** The demo's last line. */
export const closingLine = (r: DemoReport): string => `demo took ${s(r.realMs)}; ${r.ok ? 'OK' : 'FAILED'}\n`;
