// Scenarios 1 and 2: 200 servers on one host, drainer's Nova plugin (through the PluginHost, as the
// agent runs it) against the Nova emulation. Makespan against the list-scheduling bound, and Nova API
// requests per migrated server, for two mixes of copy times; and drainer against a client that fires
// every os-migrateLive at once (as `nova host-evacuate-live` does). The plugin sleeps and reads time
// on the emulation's scaled clock, so its poll is measured on the same time base as the migrations.
import { configSchema } from '../../src/config/schema.ts';
import { MemoryRecordStore, PluginHost, type HostOutcome } from '../../src/core/backends/host.ts';
import type { BackendPlugin } from '../../src/core/backends/plugin.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createNovaPlugin } from '../../src/plugins/nova/index.ts';
import { ScaledClock } from '../../src/sandbox/clock.ts';
import { openstackConfigFor } from '../../src/sandbox/scenario-config.ts';
import { seededRandom } from '../../src/sandbox/openstack/ids.ts';
import { startOpenStack, type OpenStackSandbox, type StateEvent } from '../../src/sandbox/openstack/index.ts';
import { atMost, info, type Figure } from '../lib/report.ts';
import { ComputeClient, KeystoneSession, createHttp } from '../../src/plugins/nova/index.ts';
import { idealMakespan, round, seededDurations, seededLogDurations } from '../lib/stats.ts';

export interface MakespanOptions {
  readonly servers: number;
  readonly slots: number;
  /** Simulated seconds per real second. */
  readonly scale: number;
  readonly seed: number;
  readonly minMs: number;
  readonly maxMs: number;
  /** How copy times are drawn between minMs and maxMs. */
  readonly mix: 'uniform' | 'log-uniform';
}

/** What the comparison with a fire-everything client measured (simulated ms). */
export interface FireAllRun {
  readonly slots: number;
  readonly drainerMs: number;
  readonly fireAllMs: number;
  readonly fireAllRequests: number;
  readonly drainerPhases: Phases;
  readonly fireAllPhases: Phases;
}

/** What one run measured, all in simulated ms. */
export interface MakespanRun {
  readonly slots: number;
  readonly moved: number;
  readonly makespanMs: number;
  readonly idealMs: number;
  readonly ratio: number;
  readonly novaRequests: number;
  readonly requestsPerServer: number;
  readonly byKind: Record<string, number>;
  /** Mean time a migration held a Nova slot (preparing → completed). */
  readonly meanSlotMs: number;
  /** Mean of accepted → preparing: Nova's scheduler plus any wait for a slot. */
  readonly meanAcceptedToSlotMs: number;
  /** Mean of "server on its new host" → drainer's next request about it (how late the poll sees it). */
  readonly meanNoticeMs: number;
  /** Share of the makespan the host's slots were busy. */
  readonly utilization: number;
  /** Mean real time of one poll's work (listing, GETs, POSTs) between two sleeps. */
  readonly meanPollRealMs: number;
  /** The best a drainer that keeps exactly M in flight could do if it noticed every end at once. */
  readonly exactlyMBoundMs: number;
  readonly phases: Phases;
}

// The emulation's fixed costs around the memory copy (its defaults, stated here so the bound is explicit).
const TIMINGS = { scheduleMs: 1000, prepareMs: 300, postMigrationMs: 200 };

/** The drainer's request kinds, for the breakdown. */
function kindOf(method: string, path: string): string {
  const p = path.split('?')[0] ?? '';
  if (p.startsWith('/v3')) return 'keystone';
  if (method === 'POST' && p.endsWith('/action')) return 'action';
  if (p.endsWith('/servers/detail')) return path.includes('changes-since') ? 'changes' : 'list';
  if (/\/servers\/[^/]+$/.test(p)) return 'get-server';
  if (p.includes('/os-services')) return 'services';
  if (p.includes('/os-hypervisors')) return 'hypervisors';
  return 'other';
}

class Timeline {
  readonly accepted = new Map<string, number>();
  readonly preparing = new Map<string, number>();
  readonly completed = new Map<string, number>();
  readonly moved = new Map<string, number>();
  readonly #clock: ScaledClock;
  readonly #source: string;

  constructor(clock: ScaledClock, source: string) {
    this.#clock = clock;
    this.#source = source;
  }

  observe(e: StateEvent): void {
    const now = this.#clock.now();
    if (e.kind === 'migration') {
      const id = e.migration.serverId;
      const at = { accepted: this.accepted, preparing: this.preparing, completed: this.completed }[
        e.migration.status as 'accepted' | 'preparing' | 'completed'
      ];
      if (at && !at.has(id)) at.set(id, now);
    } else if (e.kind === 'server' && e.server.host !== this.#source && !this.moved.has(e.server.id)) {
      this.moved.set(e.server.id, now);
    }
  }
}

/** Where a run's time went (simulated ms): before the first slot, slots idle between, after the last move. */
export interface Phases {
  readonly firstSlotMs: number;
  readonly idleMs: number;
  readonly tailMs: number;
}

/** Slot-time the host left idle from the first slot to the last move, and the run's two ends. */
function phasesOf(t: Timeline, slots: number, start: number, end: number): Phases {
  const events = [
    ...[...t.preparing.values()].map((at) => ({ at, d: 1 })),
    ...[...t.completed.values()].map((at) => ({ at, d: -1 })),
  ].sort((a, b) => a.at - b.at || a.d - b.d);
  const first = events[0]?.at ?? start;
  const lastMove = Math.max(first, ...t.moved.values());
  let busy = 0;
  let prev = first;
  let idle = 0;
  for (const e of events) {
    const at = Math.min(e.at, lastMove);
    idle += Math.max(0, slots - busy) * Math.max(0, at - prev);
    prev = Math.max(prev, at);
    busy += e.d;
  }
  return { firstSlotMs: first - start, idleMs: idle / slots, tailMs: end - lastMove };
}

const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

const durationsOf = (o: MakespanOptions): number[] =>
  (o.mix === 'uniform' ? seededDurations : seededLogDurations)(
    seededRandom(o.seed),
    o.servers,
    o.minMs,
    o.maxMs,
  );

function emulate(o: MakespanOptions, clock: ScaledClock, durations: number[]): Promise<OpenStackSandbox> {
  const ramMb = 1024;
  return startOpenStack({
    clock,
    hosts: [
      { name: 'src', maxConcurrentLiveMigrations: o.slots, ramMb: 1_000_000 },
      { name: 'dst-1', ramMb: 1_000_000 },
      { name: 'dst-2', ramMb: 1_000_000 },
    ],
    servers: durations.map((d, i) => ({
      name: `vm-${i + 1}`,
      projectId: i % 2 ? 'admin' : 'demo',
      host: 'src',
      ramMb,
      migrationMs: d,
    })),
    timings: TIMINGS,
  });
}

async function runOnce(o: MakespanOptions): Promise<MakespanRun> {
  const clock = new ScaledClock(o.scale);
  const durations = durationsOf(o);
  const openstack = await emulate(o, clock, durations);
  const timeline = new Timeline(clock, 'src');
  const unsubscribe = openstack.state.subscribe((e) => timeline.observe(e));
  try {
    const config = configSchema.parse({
      openstack: openstackConfigFor(openstack),
      // Only what the scenario needs: the drainer's limit matches Nova's. pollInterval stays the default.
      nova: { hostMapping: { 'node-src': 'src' }, maxConcurrentMigrations: o.slots },
    });
    const log = createLogger({ level: 'silent' });
    const pollWork: number[] = [];
    let woke: number | undefined;
    const sleep = async (ms: number, signal?: AbortSignal) => {
      if (woke !== undefined) pollWork.push(performance.now() - woke);
      await clock.sleep(ms, signal);
      woke = performance.now();
    };
    const plugin = createNovaPlugin({
      nova: config.nova,
      openstack: config.openstack,
      log,
      sleep,
      now: () => clock.now(),
    });
    const before = openstack.requestLog.length;
    const start = clock.now();
    const outcome = await evacuateThroughHost(plugin, log);
    const end = clock.now();
    const makespanMs = end - start;
    const moved = outcome?.workloads.filter((w) => w.state === 'succeeded').length ?? 0;
    if (!outcome?.succeeded || moved !== o.servers)
      throw new Error(`makespan M=${o.slots}: evacuation did not move every server: ${outcome?.message}`);

    const log2 = openstack.requestLog.slice(before);
    const byKind: Record<string, number> = {};
    for (const r of log2) byKind[kindOf(r.method, r.path)] = (byKind[kindOf(r.method, r.path)] ?? 0) + 1;
    // Nova's slot holds prepare + memory copy + post-migration; that is the physical limit.
    const slotMs = durations.map((d) => TIMINGS.prepareMs + d + TIMINGS.postMigrationMs);
    const idealMs = idealMakespan(slotMs, o.slots);
    const ids = [...timeline.completed.keys()];
    const held = ids.map((id) => (timeline.completed.get(id) ?? 0) - (timeline.preparing.get(id) ?? 0));
    const waited = ids.map((id) => (timeline.preparing.get(id) ?? 0) - (timeline.accepted.get(id) ?? 0));
    const noticed = noticeDelays(openstack, timeline);
    return {
      slots: o.slots,
      moved,
      makespanMs,
      idealMs,
      ratio: makespanMs / idealMs,
      novaRequests: log2.length,
      requestsPerServer: log2.length / moved,
      byKind,
      meanSlotMs: mean(held),
      meanAcceptedToSlotMs: mean(waited),
      meanNoticeMs: mean(noticed),
      utilization: held.reduce((a, b) => a + b, 0) / (o.slots * makespanMs),
      meanPollRealMs: mean(pollWork),
      // The next migration is submitted when the previous one's server shows the new host, so each
      // in-flight place is busy for schedule + prepare + copy (post-migration overlaps the next one).
      exactlyMBoundMs: idealMakespan(
        durations.map((d) => TIMINGS.scheduleMs + TIMINGS.prepareMs + d),
        o.slots,
      ),
      phases: phasesOf(timeline, o.slots, start, end),
    };
  } finally {
    unsubscribe();
    await openstack.close();
  }
}

/** For each moved server: from its switch to the new host to drainer's next poll (which saw it). */
function noticeDelays(openstack: OpenStackSandbox, t: Timeline): number[] {
  const polls = openstack.requestLog
    .filter((r) => r.method === 'GET' && (r.path.split('?')[0] ?? '').endsWith('/servers/detail'))
    .map((r) => r.at);
  return [...t.moved.values()].flatMap((at) => {
    const seen = polls.find((p) => p >= at);
    return seen === undefined ? [] : [seen - at];
  });
}

/**
 * The fire-everything client on the same emulated host: disable the service, every os-migrateLive at
 * once, then a listing of the host every 2 s until it is empty (`nova host-evacuate-live` fires and
 * returns; an operator's script then waits like this).
 */
async function fireAll(
  o: MakespanOptions,
): Promise<{ makespanMs: number; requests: number; phases: Phases }> {
  const clock = new ScaledClock(o.scale);
  const openstack = await emulate(o, clock, durationsOf(o));
  const timeline = new Timeline(clock, 'src');
  const unsubscribe = openstack.state.subscribe((e) => timeline.observe(e));
  try {
    const before = openstack.requestLog.length;
    const start = clock.now();
    const { compute, sleep } = await fireEverything(openstack, clock);
    while ((await compute.listServersOnHost('src')).length > 0) await sleep(2000);
    const end = clock.now();
    return {
      makespanMs: end - start,
      requests: openstack.requestLog.length - before,
      phases: phasesOf(timeline, o.slots, start, end),
    };
  } finally {
    unsubscribe();
    await openstack.close();
  }
}

/** The Nova plugin through the PluginHost (as the agent runs it), evacuating node-src. */
export async function evacuateThroughHost(
  plugin: BackendPlugin,
  log: Logger,
): Promise<HostOutcome | undefined> {
  const host = new PluginHost({ plugins: [plugin], log });
  const [outcome] = await host.evacuate(
    { name: 'node-src' },
    {
      signal: new AbortController().signal,
      deadline: new Date(Date.now() + 3_600_000),
      trigger: 'bench',
      dryRun: false,
      abortOnCancel: false,
      records: new MemoryRecordStore(),
    },
  );
  return outcome;
}

/**
 * As `nova host-evacuate-live`: disables the service of host `src` and fires every os-migrateLive
 * at once. Gives back the client and its sleep, for the caller's wait.
 */
export async function fireEverything(openstack: OpenStackSandbox, clock: ScaledClock) {
  const config = configSchema.parse({ openstack: openstackConfigFor(openstack) });
  const sleep = (ms: number, signal?: AbortSignal) => clock.sleep(ms, signal);
  const http = createHttp({ timeoutMs: 30_000, tls: { insecure: false }, sleep });
  const session = new KeystoneSession({ openstack: config.openstack, http, now: () => clock.now() });
  const compute = new ComputeClient({ http, session });
  const [svc] = await compute.listServices('src');
  if (svc) await compute.disableService(svc, 'fire-everything bench');
  const servers = await compute.listServersOnHost('src');
  await Promise.all(servers.map((s) => compute.liveMigrate(s.id)));
  return { compute, sleep };
}

export interface MakespanResult {
  readonly runs: MakespanRun[];
  readonly realistic: MakespanRun[];
  readonly fireAll: FireAllRun[];
  readonly makespan: Figure[];
  readonly apiCost: Figure[];
}

export type MixOptions = Omit<MakespanOptions, 'slots'>;

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

const WARM_UP_SERVERS = 4;

/** A subset of the cases, for looking at one (a partial `node bench/run.ts makespan`). */
export interface MakespanSubset {
  readonly slots?: readonly number[];
  /** Only the 1–4 s mix (with fire-everything) or only the 10–300 s one. */
  readonly mix?: 'short' | 'realistic';
}

export async function makespan(
  o: MixOptions,
  realisticMix: MixOptions,
  allSlots: readonly number[],
  subset: MakespanSubset = {},
): Promise<MakespanResult> {
  const runs: MakespanRun[] = [];
  const realistic: MakespanRun[] = [];
  const fire: FireAllRun[] = [];
  const slots = allSlots.filter((m) => !subset.slots || subset.slots.includes(m));
  // Unmeasured: the first evacuation in a fresh process pays for loading and compiling the code (up to
  // ~2 s simulated at ×10), which would land on whichever case runs first.
  await runOnce({ ...o, servers: WARM_UP_SERVERS, slots: 1 });
  for (const m of subset.mix === 'realistic' ? [] : slots) {
    const r = await runOnce({ ...o, slots: m });
    runs.push(r);
    const f = await fireAll({ ...o, slots: m });
    fire.push({
      slots: m,
      drainerMs: r.makespanMs,
      fireAllMs: f.makespanMs,
      fireAllRequests: f.requests,
      drainerPhases: r.phases,
      fireAllPhases: f.phases,
    });
  }
  for (const m of subset.mix === 'short' ? [] : slots)
    realistic.push(await runOnce({ ...realisticMix, slots: m }));
  const real = 'copies 10–300 s: ';
  return {
    runs,
    realistic,
    fireAll: fire,
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
