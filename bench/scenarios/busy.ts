// Scenario "busy": 40 servers on one host, 10 % of them dirtying memory faster than the link copies
// it, M = 2, on the emulation's scaled clock. drainer (default nova.onStall: force-complete) against
// the fire-everything client, which leaves the busy ones to Nova's completion timeout (abort): how
// many servers stay on the host, the makespans, drainer's makespan over the ideal (each busy server
// counted at nova.stallAfter plus its forced finish), and Nova requests per migrated server.
import { configSchema } from '../../src/config/schema.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createNovaPlugin } from '../../src/plugins/nova/index.ts';
import { ScaledClock } from '../../src/sandbox/clock.ts';
import { seededRandom } from '../../src/sandbox/openstack/ids.ts';
import { startOpenStack, type OpenStackSandbox } from '../../src/sandbox/openstack/index.ts';
import { openstackConfigFor } from '../../src/sandbox/scenario-config.ts';
import { atMost, info, type Figure } from '../lib/report.ts';
import { idealMakespan, round, seededDurations } from '../lib/stats.ts';
import { evacuateThroughHost, fireEverything } from './makespan.ts';

export interface BusyOptions {
  readonly servers: number;
  /** Every n-th server is busy (10 → 10 %). */
  readonly busyEvery: number;
  readonly slots: number;
  /** Simulated seconds per real second. */
  readonly scale: number;
  readonly seed: number;
  /** The source host's migration link, and the busy guests' dirty rate (MB/s). */
  readonly linkMbPerSecond: number;
  readonly dirtyMbPerSecond: number;
  /** Quiet guests' memory, drawn uniformly (MB); the busy ones have busyRamMb. */
  readonly minRamMb: number;
  readonly maxRamMb: number;
  readonly busyRamMb: number;
  /** Nova's live_migration_completion_timeout on the source, scaled (s per GiB). */
  readonly completionTimeoutSecondsPerGiB: number;
}

export interface BusyResult {
  readonly figures: Figure[];
  readonly drainer: { makespanMs: number; left: number; forced: number; requestsPerServer: number };
  readonly fireAll: { makespanMs: number; left: number };
  readonly idealMs: number;
  readonly stallAfterSeconds: number;
}

// The emulation's fixed costs (its defaults), stated here so the ideal is explicit.
const TIMINGS = { scheduleMs: 1000, prepareMs: 300, postMigrationMs: 200, abortMs: 200 };
/** What is left of a busy guest when it stalls: its hot working set (the emulation's 40 %). */
const HOT_SHARE = 0.4;

const isBusy = (o: BusyOptions, i: number) => i % o.busyEvery === o.busyEvery - 1;

function ramOf(o: BusyOptions): number[] {
  const quiet = seededDurations(seededRandom(o.seed), o.servers, o.minRamMb, o.maxRamMb);
  return quiet.map((mb, i) => (isBusy(o, i) ? o.busyRamMb : mb));
}

function emulate(o: BusyOptions, clock: ScaledClock): Promise<OpenStackSandbox> {
  const ram = ramOf(o);
  return startOpenStack({
    clock,
    hosts: [
      {
        name: 'src',
        maxConcurrentLiveMigrations: o.slots,
        ramMb: 2_000_000,
        migrationMbPerSecond: o.linkMbPerSecond,
        completionTimeoutSecondsPerGiB: o.completionTimeoutSecondsPerGiB,
        timeoutAction: 'abort',
      },
      { name: 'dst-1', ramMb: 2_000_000 },
      { name: 'dst-2', ramMb: 2_000_000 },
    ],
    servers: ram.map((ramMb, i) => ({
      name: `${isBusy(o, i) ? 'db' : 'vm'}-${i + 1}`,
      projectId: i % 2 ? 'admin' : 'demo',
      host: 'src',
      ramMb,
      dirtyMbPerSecond: isBusy(o, i) ? o.dirtyMbPerSecond : 0,
    })),
    timings: TIMINGS,
  });
}

/** Slot time of each server at best: a quiet one copies once; a busy one stalls, then is forced. */
function idealOf(o: BusyOptions, stallAfterMs: number): number {
  const perMs = o.linkMbPerSecond / 1000;
  const slot = ramOf(o).map((mb, i) => {
    const copy = isBusy(o, i) ? stallAfterMs + TIMINGS.abortMs + (HOT_SHARE * mb) / perMs : mb / perMs;
    return TIMINGS.prepareMs + copy + TIMINGS.postMigrationMs;
  });
  return idealMakespan(slot, o.slots);
}

async function drainer(o: BusyOptions) {
  const clock = new ScaledClock(o.scale);
  const openstack = await emulate(o, clock);
  try {
    const config = configSchema.parse({
      openstack: openstackConfigFor(openstack),
      nova: { hostMapping: { 'node-src': 'src' }, maxConcurrentMigrations: o.slots },
    });
    const plugin = createNovaPlugin({
      nova: config.nova,
      openstack: config.openstack,
      log: createLogger({ level: 'silent' }),
      sleep: (ms, signal) => clock.sleep(ms, signal),
      now: () => clock.now(),
    });
    const before = openstack.requestLog.length;
    const start = clock.now();
    const outcome = await evacuateThroughHost(plugin, createLogger({ level: 'silent' }));
    const makespanMs = clock.now() - start;
    const log = openstack.requestLog.slice(before);
    const moved = outcome?.workloads.filter((w) => w.state === 'succeeded').length ?? 0;
    return {
      makespanMs,
      left: openstack.state.serversOnHost('src').length,
      forced: log.filter((r) => r.method === 'POST' && /\/migrations\/\d+\/action$/.test(r.path)).length,
      requestsPerServer: log.length / Math.max(1, moved),
      stallAfterSeconds: config.nova.stallAfter,
    };
  } finally {
    await openstack.close();
  }
}

/**
 * The fire-everything client (as `nova host-evacuate-live`): disable the service, every
 * os-migrateLive at once, then a listing of the host every 2 s until nothing on it is migrating.
 */
async function fireAll(o: BusyOptions) {
  const clock = new ScaledClock(o.scale);
  const openstack = await emulate(o, clock);
  try {
    const start = clock.now();
    const { compute, sleep } = await fireEverything(openstack, clock);
    while ((await compute.listServersOnHost('src')).some((s) => s.status === 'MIGRATING')) await sleep(2000);
    return { makespanMs: clock.now() - start, left: openstack.state.serversOnHost('src').length };
  } finally {
    await openstack.close();
  }
}

const s1 = (ms: number) => round(ms / 1000, 1);

export async function busy(o: BusyOptions): Promise<BusyResult> {
  const d = await drainer(o);
  const f = await fireAll(o);
  const idealMs = idealOf(o, d.stallAfterSeconds * 1000);
  const m = `M=${o.slots}`;
  return {
    drainer: d,
    fireAll: f,
    idealMs,
    stallAfterSeconds: d.stallAfterSeconds,
    figures: [
      atMost(`${m}: servers left on the host by drainer`, d.left, 0),
      info(`${m}: servers left on the host by fire-everything`, f.left),
      atMost(`${m}: drainer makespan / ideal`, round(d.makespanMs / idealMs), 1.1),
      info(
        `${m}: makespan drainer, ideal, fire-everything (simulated)`,
        `${s1(d.makespanMs)} s, ${s1(idealMs)} s, ${s1(f.makespanMs)} s`,
      ),
      info(`${m}: force-completes sent by drainer`, d.forced),
      atMost(`${m}: Nova API requests per migrated server`, round(d.requestsPerServer, 2), 2),
    ],
  };
}

export function busyNotes(o: BusyOptions, r: BusyResult): string[] {
  const busyCount = Array.from({ length: o.servers }, (_, i) => isBusy(o, i)).filter(Boolean).length;
  return [
    `${o.servers} ACTIVE servers on one host with max_concurrent_live_migrations = ${o.slots} and a ` +
      `${o.linkMbPerSecond} MB/s migration link; quiet guests of ${o.minRamMb}–${o.maxRamMb} MB (seed ${o.seed}); ` +
      `${busyCount} busy guests of ${o.busyRamMb} MB dirtying ${o.dirtyMbPerSecond} MB/s, which never converge ` +
      `(what is left stops at their hot set, ${HOT_SHARE * 100} % of memory). Nova's completion timeout on the ` +
      `source: ${o.completionTimeoutSecondsPerGiB} s per GiB (scaled from 800), action abort.`,
    'drainer: the Nova plugin through the PluginHost, nova.maxConcurrentMigrations = M, every other setting at ' +
      `its default (nova.stallAfter ${r.stallAfterSeconds} s, nova.onStall force-complete). fire-everything: ` +
      'disable the service, every os-migrateLive at once, then a listing every 2 s until nothing migrates; its ' +
      'busy servers end at the completion timeout, aborted, still on the host.',
    `ideal = list-scheduling bound over the slot times, a quiet server at prepare + memory / link + post, a busy ` +
      'one at prepare + stallAfter + its forced finish (the hot set over the link) + post. ' +
      `Time: the emulation's ScaledClock ×${o.scale}; the plugin sleeps and reads time on it.`,
  ];
}
