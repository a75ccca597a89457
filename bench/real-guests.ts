// `node bench/real-guests.ts` — the peer comparison and the busy mix on real QEMU guests, against the
// project's own OpenStack with the libvirt driver (`npm run openstack:up`, then its openrc in the
// environment). Needs /usr/bin/nova (python3-novaclient, installed with the stack) for the peer.
//   peer:  N idle guests; `nova host-evacuate-live` (every live migration at once, Nova's
//          max_concurrent_live_migrations = 1 on the source) against drainer (maxConcurrentMigrations 1),
//          the same servers moved back the other way; makespan = first request to the host empty.
//   busy:  the same plus one guest rewriting its memory flat out (never converges at the stack's 16 MiB/s cap):
//          the peer leaves it to Nova's live_migration_completion_timeout, drainer forces it at stallAfter.
// After every move each guest's own self-check is read: a guest whose memory check failed, that oopsed or
// rebooted counts as corrupted. Writes bench/real-guests.md and puts it into BENCHMARKS.md (bench/run.ts
// keeps it there on a full run).
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cloudFromEnv } from '../test/functional/support/cloud-env.ts';
import {
  consoleLog,
  freshReport,
  hypervisors,
  readReport,
  type GuestReport,
} from '../test/functional/support/guest.ts';
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
import { Session } from '../test/functional/support/session.ts';
import { spliceInto } from './lib/real-section.ts';
import { round } from './lib/stats.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);
const IDLE = Number(process.env.REAL_BENCH_IDLE ?? 3);
const STALL_AFTER = 20;

interface Side {
  makespanS: number;
  moved: number;
  left: number;
  /** Guests damaged by this move, each with what showed it. */
  corrupted: string[];
  forced?: number;
  novaRequests?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function boot(
  admin: Session,
  host: string,
  images: string[],
  flavor: string,
  tag: string,
): Promise<string[]> {
  const ids = await Promise.all(
    images.map((imageId, i) =>
      bootServer(admin, { name: `drainer-bench-${tag}-${i}`, host, imageId, flavorId: flavor }),
    ),
  );
  for (const id of ids) await waitServer(admin, id, 'ACTIVE', 300_000);
  return ids;
}

async function reports(admin: Session, ids: string[]): Promise<Map<string, GuestReport>> {
  const out = new Map<string, GuestReport>();
  for (const id of ids) out.set(id, await freshReport(admin, id, 0, 2));
  return out;
}

/**
 * Guests damaged since `before`, each with what showed it: a failed self-check after its last tick,
 * a crash, a boot it had not had, or no tick in 90 s. Judged against the guest's own report before
 * this move, so the second side of the peer case is not charged for what the first side did to the
 * same guests; by tick number and boot id, as the console log starts again after each migration.
 */
async function corrupted(admin: Session, before: Map<string, GuestReport>): Promise<string[]> {
  const out: string[] = [];
  for (const [id, b] of before) {
    const now = await freshReport(admin, id, b.lastTick, 2).catch(async () =>
      readReport(await consoleLog(admin, id)),
    );
    const failed = now.badTicks.filter((t) => t > b.lastTick);
    const why = [
      failed.length ? `failed self-check at tick ${failed.join(', ')}` : '',
      now.crashed && !b.crashed ? 'a kernel oops' : '',
      now.boots.some((id) => !b.boots.includes(id)) ? 'a new boot' : '',
      now.lastTick <= b.lastTick ? `no tick after ${b.lastTick}` : '',
    ].filter(Boolean);
    if (why.length) out.push(`${id.slice(0, 8)}: ${why.join(', ')}`);
  }
  return out;
}

async function untilEmpty(admin: Session, host: string, ids: Set<string>, limitMs: number): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < limitMs) {
    const here = (await serversOnHost(admin, host)).filter((s) => ids.has(s.id) && s.taskState === null);
    const moving = (await serversOnHost(admin, host)).some((s) => ids.has(s.id) && s.taskState !== null);
    if (here.length === 0 && !moving) break;
    if (!moving && here.length > 0) break; // what is left stays (its migration ended)
    await sleep(2000);
  }
  return (Date.now() - start) / 1000;
}

/** `nova host-evacuate-live <host>`, then a listing every 2 s until no migration of ours is left. */
async function peer(admin: Session, source: string, ids: string[]): Promise<Side> {
  const before = await reports(admin, ids);
  const start = Date.now();
  await run('/usr/bin/nova', ['--os-compute-api-version', '2.53', 'host-evacuate-live', source], {
    env: { ...process.env, PATH: '/usr/bin:/bin' },
  });
  await untilEmpty(admin, source, new Set(ids), 900_000);
  const makespanS = (Date.now() - start) / 1000;
  const left = (await serversOnHost(admin, source)).filter((s) => ids.includes(s.id)).length;
  return { makespanS, moved: ids.length - left, left, corrupted: await corrupted(admin, before) };
}

async function drainer(admin: Session, source: string, ids: string[]): Promise<Side> {
  const before = await reports(admin, ids);
  let requests = 0;
  const plugin = await novaPlugin(
    admin.cloud,
    { maxConcurrentMigrations: 1, stallAfter: STALL_AFTER, onStall: 'force-complete', pollInterval: 2 },
    { onApiRequest: (api) => void (api === 'nova' && requests++) },
  );
  const start = Date.now();
  const { outcome } = await evacuate(plugin, source);
  const makespanS = (Date.now() - start) / 1000;
  await setService(admin, source, true);
  const left = (await serversOnHost(admin, source)).filter((s) => ids.includes(s.id)).length;
  const forced = outcome.workloads.filter((w) => /forc/i.test(w.message ?? '')).length;
  return {
    makespanS,
    moved: ids.length - left,
    left,
    corrupted: await corrupted(admin, before),
    forced,
    novaRequests: requests / Math.max(1, ids.length - left),
  };
}

async function main(): Promise<void> {
  const admin = await Session.open(cloudFromEnv());
  const hv = await hypervisors(admin);
  if (!hv.some((h) => h.type === 'QEMU'))
    throw new Error('bench/real-guests.ts needs the libvirt stack (NOVA_DRIVER=libvirt)');
  const [a, b] = ['compute-a', 'compute-b'];
  const flavor = await findFlavorId(admin, 'drainer.guest');
  const idle = await findImageId(admin, 'drainer-guest');
  const hot = await findImageId(admin, 'drainer-guest-hot');
  const load = (await readFile('/proc/loadavg', 'utf8')).split(' ')[0];
  const rows: string[] = [];
  const damage: string[] = [];
  const damaged = (what: string, side: Side) => damage.push(...side.corrupted.map((g) => `- ${what}: ${g}`));
  const all: string[] = [];
  try {
    // peer comparison: idle guests a → b by nova, then b → a by drainer
    const ids = await boot(admin, a, Array(IDLE).fill(idle), flavor, 'peer');
    all.push(...ids);
    const p = await peer(admin, a, ids);
    await setService(admin, a, true);
    const d = await drainer(admin, b, ids);
    rows.push(
      `| peer, ${IDLE} idle guests, M = 1 | ${round(d.makespanS, 1)} s | ${round(p.makespanS, 1)} s | ${round(d.makespanS / p.makespanS, 2)} | ${d.forced} | ${d.corrupted.length} / ${p.corrupted.length} | ${round(d.novaRequests!, 1)} |`,
    );
    damaged('peer, nova', p);
    damaged('peer, drainer', d);
    for (const id of all.splice(0)) await deleteServer(admin, id);

    // busy mix: idle guests and one that never converges, a → b by nova, then (fresh guests) a → b by drainer
    const mix = [...Array(IDLE).fill(idle), hot];
    const first = await boot(admin, a, mix, flavor, 'busy-nova');
    all.push(...first);
    const pb = await peer(admin, a, first);
    await setService(admin, a, true);
    for (const id of all.splice(0)) await deleteServer(admin, id);
    const second = await boot(admin, a, mix, flavor, 'busy-drainer');
    all.push(...second);
    const db = await drainer(admin, a, second);
    rows.push(
      `| busy mix, ${IDLE} idle + 1 never converging, M = 1 | ${round(db.makespanS, 1)} s (${db.left} left) | ${round(pb.makespanS, 1)} s (${pb.left} left) | ${round(db.makespanS / pb.makespanS, 2)} | ${db.forced} | ${db.corrupted.length} / ${pb.corrupted.length} | ${round(db.novaRequests!, 1)} |`,
    );
    damaged('busy mix, nova', pb);
    damaged('busy mix, drainer', db);
  } finally {
    for (const id of all) await deleteServer(admin, id).catch(() => undefined);
    await setService(admin, a, true).catch(() => undefined);
    await setService(admin, b, true).catch(() => undefined);
  }
  const md = [
    '## real guests',
    '',
    "Written by `node bench/real-guests.ts` against the project's own OpenStack with the libvirt driver",
    `(\`npm run openstack:up\`: QEMU under TCG, migrations capped at 16 MiB/s, guests of 256 MiB); load average ${load}`,
    `at the start; ${new Date().toISOString().slice(0, 10)}. The peer is \`nova host-evacuate-live\` (every migration`,
    "at once; Nova's max_concurrent_live_migrations = 1 on the source), drainer runs with maxConcurrentMigrations 1,",
    `stallAfter ${STALL_AFTER} s and onStall force-complete. Makespan: first request to the last server on its new host`,
    '(or its migration ended). Corrupted: a guest whose own memory check failed, that oopsed, rebooted or stopped',
    'ticking after the move (goal 0).',
    '',
    '| case | drainer makespan | nova makespan | ratio drainer / nova | drainer forced | corrupted drainer / nova | Nova requests per migrated server (drainer) |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    ...(damage.length ? ['Guests counted corrupted, and what showed it:', '', ...damage, ''] : []),
  ].join('\n');
  await writeFile(path.join(REPO, 'bench/real-guests.md'), md);
  await spliceInto(path.join(REPO, 'BENCHMARKS.md'), md);
  process.stdout.write(md);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e: unknown) => {
    process.stderr.write(`real-guests: ${(e as Error).message}\n`);
    process.exit(1);
  });
}
