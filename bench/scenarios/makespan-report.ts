// How the makespan scenario reads: its figures against the goals, and the notes for the makespan and
// for the API cost.
import { atMost, info, type Figure } from '../lib/report.ts';
import { round } from '../lib/stats.ts';
import type { FireAllRun, MakespanResult, MakespanRun, MixOptions } from './makespan.ts';
import { TIMINGS, type Phases } from './makespan-timeline.ts';

const s1 = (ms: number) => round(ms / 1000, 1);
const phaseText = (p: Phases) => `${s1(p.firstSlotMs)} s, ${s1(p.idleMs)} s, ${s1(p.tailMs)} s`;

function makespanFigures(r: MakespanRun, label: string): Figure[] {
  return [
    atMost(`${label}M=${r.slots}: makespan / ideal`, round(r.ratio), 1.05),
    info(`${label}M=${r.slots}: makespan, ideal (simulated)`, `${s1(r.makespanMs)} s, ${s1(r.idealMs)} s`),
    info(
      `${label}M=${r.slots}: mean slot held, accepted→slot, move→noticed (simulated)`,
      `${s1(r.meanSlotMs)} s, ${s1(r.meanAcceptedToSlotMs)} s, ${s1(r.meanNoticeMs)} s`,
    ),
    info(`${label}M=${r.slots}: slot utilization`, `${round(r.utilization * 100, 1)} %`),
  ];
}

function apiFigures(r: MakespanRun, label: string): Figure[] {
  return [
    atMost(`${label}M=${r.slots}: Nova API requests per migrated server`, round(r.requestsPerServer, 2), 2),
    info(
      `${label}M=${r.slots}: requests by kind`,
      Object.entries(r.byKind)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
    ),
  ];
}

/** The figures of the runs: makespan against the bound and fire-everything, and API requests per server. */
export function makespanFigureSets(
  runs: readonly MakespanRun[],
  realistic: readonly MakespanRun[],
  fire: readonly FireAllRun[],
): Pick<MakespanResult, 'makespan' | 'apiCost'> {
  const real = 'copies 10–300 s: ';
  return {
    makespan: [
      ...runs.flatMap((r) => makespanFigures(r, '')),
      ...realistic.flatMap((r) => makespanFigures(r, real)),
      ...fire.flatMap((f) => [
        atMost(`M=${f.slots}: drainer / fire-everything makespan`, round(f.drainerMs / f.fireAllMs), 1),
        info(
          `M=${f.slots}: drainer, fire-everything (simulated; requests)`,
          `${s1(f.drainerMs)} s, ${s1(f.fireAllMs)} s (fire-everything: ${f.fireAllRequests} requests)`,
        ),
        info(
          `M=${f.slots}: to the first slot, slots idle, last move to the end: drainer; fire-everything (simulated)`,
          `${phaseText(f.drainerPhases)}; ${phaseText(f.fireAllPhases)}`,
        ),
      ]),
    ],
    apiCost: [...runs.flatMap((r) => apiFigures(r, '')), ...realistic.flatMap((r) => apiFigures(r, real))],
  };
}

function whereTimeGoes(runs: readonly MakespanRun[], label: string): string {
  const s = (ms: number) => round(ms / 1000, 2);
  return runs
    .map(
      (r) =>
        `${label}M=${r.slots}: slot held ${s(r.meanSlotMs)} s per server, ${s(r.meanAcceptedToSlotMs)} s from the ` +
        `os-migrateLive to a slot (scheduler, then Nova's queue), ${s(r.meanNoticeMs)} s from a server reaching its ` +
        `new host to drainer's next poll; slots busy ${round(r.utilization * 100, 1)} % of the makespan`,
    )
    .join('; ');
}

export function makespanNotes(o: MixOptions, realisticMix: MixOptions, r: MakespanResult): string[] {
  const notes = [
    `${o.servers} ACTIVE servers on one host; memory-copy times uniform ${o.minMs / 1000}–${o.maxMs / 1000} s ` +
      `(seed ${o.seed}), and ("copies 10–300 s") log-uniform ${realisticMix.minMs / 1000}–${realisticMix.maxMs / 1000} s ` +
      `(seed ${realisticMix.seed}). Nova's slot (max_concurrent_live_migrations = M) is held for prepare ` +
      `${TIMINGS.prepareMs / 1000} s + copy + post-migration ${TIMINGS.postMigrationMs / 1000} s; the scheduler's ` +
      `${TIMINGS.scheduleMs / 1000} s comes before it. ideal = max(Σ slot time / M, longest slot time), the ` +
      'list-scheduling lower bound.',
    'drainer: the Nova plugin through the PluginHost (as the agent runs it), nova.maxConcurrentMigrations = M, every ' +
      "other setting at its default (nova.submitAhead unset = 3 × M, at least 5, plus M for the slots' " +
      "post-migrations, at the emulation's 2.100, so 7 submitted at M=1 and 20 at M=4; a migration counts until " +
      'its record ends, the landed ones as at most M without a read; nova.pollInterval 120 s as the upper bound ' +
      'of the adaptive poll). The poll ' +
      "times each end by the server's `updated` against Nova's Date header (the emulation's clock). Makespan = " +
      'evacuate() call to return. One unmeasured evacuation of 4 servers runs first, so no case pays for ' +
      'loading and compiling the code.',
    `Time: the emulation's ScaledClock, ×${o.scale} for the 1–4 s mix and ×${realisticMix.scale} for the 10–300 s mix ` +
      '(so the scenario stays within minutes); the plugin sleeps and reads time on that clock. Real HTTP time is ' +
      'stretched by the same factor, so the larger scale makes every request look ×20 slower than at ×10; the ' +
      'machine is shared with other work, which adds noise to both.',
    'fire-everything: on the same emulated host and mix, disable the service, every os-migrateLive at once (as ' +
      "`nova host-evacuate-live`), then a listing of the host every 2 s until it is empty; the ratio is drainer's " +
      'makespan over that one. "to the first slot, slots idle, last move to the end" splits each makespan: from ' +
      "the start to Nova's first migration holding a slot; the slot time left idle (Σ idle slot time / M) from " +
      'then until the last server reached its new host; and from that to the end (noticing it).',
  ];
  const all = [...r.runs, ...r.realistic];
  // the same test as the figures' (a ratio rounded to 3 decimals), so the note never contradicts them
  const missed =
    all.some((x) => x.ratio > 1.05) || r.fireAll.some((f) => round(f.drainerMs / f.fireAllMs) > 1);
  for (const f of r.fireAll.filter(
    (x) => x.drainerMs > x.fireAllMs && round(x.drainerMs / x.fireAllMs) <= 1,
  )) {
    notes.push(
      `M=${f.slots}: drainer ended ${round((f.drainerMs - f.fireAllMs) / 1000, 1)} s (simulated) after ` +
        "fire-everything: less than the ratio's third decimal, and less than the run-to-run noise (±0.003).",
    );
  }
  if (missed) {
    notes.push(
      'Missed. Where the time goes: ' +
        whereTimeGoes(r.runs, '') +
        '; ' +
        whereTimeGoes(r.realistic, 'copies 10–300 s, ') +
        ". A slot idles when Nova's queue for the host runs dry before drainer's next poll has topped it up " +
        '(the poll waits for about half the in-flight work to end) and the new submits got through the scheduler ' +
        '(the split above shows how much); and at the very end the last end is noticed one poll late.',
    );
  }
  return notes;
}

export function apiCostNotes(r: MakespanResult): string[] {
  const notes = [
    'Every request the emulation logged (Keystone included) from the start of evacuate() to its end, divided by the ' +
      'servers moved. Per server drainer makes 1 os-migrateLive; the polls (`changes`: one ' +
      "`/servers/detail?changes-since=…` each, telling every in-flight server's state) are shared by all servers, " +
      'and the host is listed (`list`) at the start and before the end.',
  ];
  const missed = [...r.runs, ...r.realistic].filter((x) => x.requestsPerServer > 2);
  if (missed.length) {
    notes.push(
      'Missed at ' +
        missed.map((x) => `M=${x.slots} (${x.byKind.changes ?? 0} polls for ${x.moved} servers)`).join(', ') +
        ': the polls come about every half of the in-flight work (3 ends at M=1 with 6 in flight, 8 at M=4), ' +
        'or every nova.pollInterval when that is sooner; add the tail and the start, and the polls approach one per server.',
    );
  }
  return notes;
}
