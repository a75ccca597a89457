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
import { startOpenStack, type OpenStackSandbox } from '../../src/sandbox/openstack/index.ts';
import type { Figure } from '../lib/report.ts';
import { ComputeClient, KeystoneSession, createHttp } from '../../src/plugins/nova/index.ts';
import { idealMakespan, seededDurations, seededLogDurations } from '../lib/stats.ts';
import { makespanFigureSets } from './makespan-report.ts';
import { kindOf, mean, noticeDelays, phasesOf, Timeline, TIMINGS, type Phases } from './makespan-timeline.ts';

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
  return { runs, realistic, fireAll: fire, ...makespanFigureSets(runs, realistic, fire) };
}
