// `node bench/real-limit.ts [servers...]` — drainer against Nova's own limit, on the project's own
// OpenStack with the fake driver (`NOVA_DRIVER=fake npm run openstack:up`, its openrc in the
// environment; /usr/bin/nova for the peer). N servers on compute-a: drainer (maxConcurrentMigrations
// = M) moves them to compute-b, then `nova host-evacuate-live` moves them back; per side, Nova's own
// records give the limit (bench/lib/nova-slots.ts). M is nova-compute's max_concurrent_live_migrations,
// which no API shows: REAL_LIMIT_M must say what the source runs (default 1). REAL_LIMIT_HOSTS names
// the two hosts (default compute-a compute-b) and REAL_LIMIT_AZ the zone to boot in (both hosts in it,
// no other: the scheduler then keeps every move between the two, away from other users of the stack).
// REAL_LIMIT_PEER=0 leaves `nova host-evacuate-live` out (its columns say —).
// drainer's token comes from a sign-in before the clock starts, as the daemon's start-up check
// (core/cluster/cloud-auth.ts) leaves one for the first cordon; REAL_LIMIT_COLD=1 puts Keystone in the lead.
// Nova's stack keeps the records' times in whole seconds (MariaDB DATETIME); sub-second figures need
//   ALTER TABLE nova.migrations MODIFY created_at DATETIME(6), MODIFY updated_at DATETIME(6);
//   ALTER TABLE nova.instance_actions_events MODIFY start_time DATETIME(6), MODIFY finish_time DATETIME(6);
// (Nova writes microseconds; the column drops them). Without it the bench says so and stops.
// Prints the table rows (markdown) and a JSON line per side.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { cloudFromEnv } from '../test/functional/support/cloud-env.ts';
import {
  bootServer,
  deleteServer,
  findFlavorId,
  findImageId,
  serversOnHost,
  setService,
  waitServer,
} from '../test/functional/support/nova.ts';
import { evacuate, novaPlugin } from '../test/functional/support/nova-plugin.ts';
import { expectStatus, Session, type Body } from '../test/functional/support/session.ts';
import { slotFigures, type SlotFigures, type SlotWork } from './lib/nova-slots.ts';
import { round } from './lib/stats.ts';

const run = promisify(execFile);
const M = Number(process.env.REAL_LIMIT_M ?? 1);
const [A = 'compute-a', B = 'compute-b'] = (process.env.REAL_LIMIT_HOSTS ?? '').split(/\s+/).filter(Boolean);
const AZ = process.env.REAL_LIMIT_AZ;
/** REAL_LIMIT_PEER=0: drainer's side only (repeated runs of it in half the time). */
const PEER = process.env.REAL_LIMIT_PEER !== '0';
/** REAL_LIMIT_COLD=1: no sign-in before drainer's clock starts (a token is what a running agent has). */
const COLD = process.env.REAL_LIMIT_COLD === '1';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Nova's times are UTC without a zone. */
const novaTime = (t: string) => Date.parse(`${t.replace(' ', 'T')}Z`);

interface Side {
  makespanMs: number;
  figures: SlotFigures;
  /** Our start → the first record's created_at; the last end → our end. */
  leadMs: number;
  tailMs: number;
  load: string;
}

const loadavg = async () => (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');

/**
 * Nova's slot work for each of `ids` moved off `source` since `since` (ms), once every record says
 * completed (a server shows on its new host while its record's post-migration still runs).
 */
async function slotWork(admin: Session, source: string, ids: string[], since: number): Promise<SlotWork[]> {
  for (let i = 0; ; i++) {
    try {
      return await slotWorkNow(admin, source, ids, since);
    } catch (e) {
      if (i >= 30 || !/migrations completed/.test((e as Error).message)) throw e;
      await sleep(1000);
    }
  }
}

async function slotWorkNow(
  admin: Session,
  source: string,
  ids: string[],
  since: number,
): Promise<SlotWork[]> {
  const res = await admin.request('compute', 'GET', '/os-migrations', {
    microversion: '2.59',
    searchParams: { migration_type: 'live-migration', source_compute: source, limit: 1000 },
  });
  const records = (expectStatus(res, 'list migrations', 200).body.migrations as Body[]).filter(
    (m) =>
      ids.includes(m.instance_uuid) && m.status === 'completed' && novaTime(m.created_at) >= since - 1000,
  );
  const out: SlotWork[] = [];
  for (const m of records) {
    const actions = expectStatus(
      await admin.request('compute', 'GET', `/servers/${m.instance_uuid}/os-instance-actions`, {
        microversion: '2.58',
      }),
      'instance actions',
      200,
    ).body.instanceActions as Body[];
    const action = actions.find(
      (a) => a.action === 'live-migration' && novaTime(a.start_time) >= since - 1000,
    );
    if (!action) throw new Error(`no live-migration action for ${m.instance_uuid}`);
    const detail = expectStatus(
      await admin.request(
        'compute',
        'GET',
        `/servers/${m.instance_uuid}/os-instance-actions/${action.request_id}`,
        { microversion: '2.58' },
      ),
      'instance action',
      200,
    ).body.instanceAction;
    const pre = (detail.events as Body[]).find((e) => e.event === 'compute_pre_live_migration');
    if (!pre) throw new Error(`no pre_live_migration event for ${m.instance_uuid}`);
    out.push({
      created: novaTime(m.created_at),
      start: novaTime(pre.start_time),
      end: novaTime(m.updated_at),
    });
  }
  if (out.length !== ids.length) throw new Error(`${out.length} of ${ids.length} migrations completed`);
  if (out.every((w) => w.end % 1000 === 0 && w.start % 1000 === 0))
    throw new Error(
      "Nova's records are in whole seconds: see the ALTER TABLE at the top of bench/real-limit.ts",
    );
  return out;
}

function side(start: number, end: number, work: SlotWork[], load: string): Side {
  return {
    makespanMs: end - start,
    figures: slotFigures(work, M),
    leadMs: Math.min(...work.map((w) => w.created)) - start,
    tailMs: end - Math.max(...work.map((w) => w.end)),
    load,
  };
}

async function drainer(admin: Session, ids: string[]): Promise<Side> {
  const load = await loadavg();
  const plugin = await novaPlugin(admin.cloud, { maxConcurrentMigrations: M, pollInterval: 2 });
  if (!COLD) await plugin.checkAuth?.(AbortSignal.timeout(30_000));
  const start = Date.now();
  const { outcome } = await evacuate(plugin, A);
  const end = Date.now();
  await setService(admin, A, true);
  const left = outcome.workloads.filter((w) => ids.includes(w.id) && w.state !== 'succeeded');
  if (left.length) throw new Error(`drainer left ${left.length}: ${left.map((w) => w.message).join('; ')}`);
  return side(start, end, await slotWork(admin, A, ids, start), load);
}

/** `nova host-evacuate-live`, then a listing every 200 ms until each server is back, idle. */
async function peer(admin: Session, ids: string[]): Promise<Side> {
  const load = await loadavg();
  const start = Date.now();
  await run('/usr/bin/nova', ['--os-compute-api-version', '2.53', 'host-evacuate-live', B], {
    env: { ...process.env, PATH: '/usr/bin:/bin' },
  });
  for (;;) {
    const home = (await serversOnHost(admin, A)).filter((s) => ids.includes(s.id) && s.taskState === null);
    if (home.length === ids.length) break;
    if (Date.now() - start > 900_000) throw new Error('host-evacuate-live did not finish in 15 min');
    await sleep(200);
  }
  return side(start, Date.now(), await slotWork(admin, B, ids, start), load);
}

const cell = (s: Side) =>
  `${round(s.makespanMs / 1000, 2)} s / ${round(s.figures.limitMs / 1000, 2)} s = **${round(s.makespanMs / s.figures.limitMs, 3)}**`;
const gaps = (s: Side) => `${Math.round(s.figures.gapP50Ms)} / ${Math.round(s.figures.gapMaxMs)}`;

async function one(admin: Session, n: number, image: string, flavor: string): Promise<string> {
  // one at a time, each kept as it is made: a refused boot (a quota) still leaves nothing behind
  const ids: string[] = [];
  try {
    for (let i = 0; i < n; i++)
      ids.push(
        await bootServer(admin, {
          name: `drainer-limit-${i}`,
          host: A,
          imageId: image,
          flavorId: flavor,
          ...(AZ ? { availabilityZone: AZ } : {}),
        }),
      );
    for (const id of ids) await waitServer(admin, id, 'ACTIVE', 300_000);
    const d = await drainer(admin, ids);
    const p = PEER ? await peer(admin, ids) : undefined;
    for (const [who, s] of [
      ['drainer', d],
      ['nova', p],
    ] as const)
      if (s)
        process.stderr.write(
          `${JSON.stringify({ who, n, m: M, cold: who === 'nova' || COLD, ...s, figures: undefined, ...s.figures })}\n`,
        );
    const of = <T>(f: (s: Side) => T) => (p ? f(p) : '—');
    return `| ${n} servers, M = ${M} | ${cell(d)} | ${of(cell)} | ${round((d.makespanMs - d.leadMs) / d.figures.limitMs, 3)} | ${gaps(d)} | ${of(gaps)} | ${Math.round(d.leadMs)} / ${Math.round(d.tailMs)} | ${of((x) => `${Math.round(x.leadMs)} / ${Math.round(x.tailMs)}`)} | ${d.load} · ${of((x) => x.load)} |`;
  } finally {
    for (const id of ids) await deleteServer(admin, id).catch(() => undefined);
    await setService(admin, A, true).catch(() => undefined);
  }
}

async function main(): Promise<void> {
  let admin: Session;
  try {
    admin = await Session.open(cloudFromEnv());
  } catch (e) {
    process.stdout.write(`real-limit: skipped, no OpenStack reachable (${(e as Error).message})\n`);
    return;
  }
  const image = await findImageId(admin);
  const flavor = await findFlavorId(admin);
  const sizes = process.argv.slice(2).map(Number);
  // hosts of the bench's own are enabled only while it runs: nobody else's server lands on them
  const own = AZ !== undefined;
  try {
    if (own) for (const h of [A, B]) await setService(admin, h, true);
    for (const n of sizes.length ? sizes : [8, 16])
      process.stdout.write(`${await one(admin, n, image, flavor)}\n`);
  } finally {
    if (own) for (const h of [A, B]) await setService(admin, h, false, 'bench/real-limit.ts: its own host');
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e: unknown) => {
    process.stderr.write(`real-limit: ${(e as Error).message}\n`);
    process.exit(1);
  });
}
