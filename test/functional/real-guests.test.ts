// drainer against real guests: the stack's libvirt driver runs each server as a QEMU (TCG) guest whose
// /init keeps checking its own memory and says so on its serial console (test/functional/stack/guest).
// Each story asserts Nova's state, the guest's own self-check (Nova's word that a move succeeded is not
// enough: under TCG a migration can report success and leave a broken guest) and drainer's report, and
// prints its figures (copy time, libvirt's downtime, rounds, Nova requests per server).
// Only where the hypervisors are QEMU; elsewhere the whole file is skipped with one line saying why.
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/core/backends/plugin.ts';
import { CancelledError } from '../../src/errors.ts';
import { useCli } from './support/cli-world.ts';
import { tail } from './support/cli.ts';
import {
  cloudGuests,
  completedJob,
  consoleLog,
  destroyGuest,
  freshReport,
  readReport,
  type GuestReport,
} from './support/guest.ts';
import { findImageId, getServer, migrationsOf, serverAction, waitServer } from './support/nova.ts';
import { evacuate, novaPlugin, restore } from './support/nova-plugin.ts';
import { expectStatus } from './support/session.ts';
import { waitFor } from './support/wait.ts';
import { useWorld, type World } from './support/world.ts';

const { types, real } = await cloudGuests();

const world = useWorld();
const cli = useCli(world);

/** One line per figure, gathered for docs/functional-tests.md and BENCHMARKS.md. */
function figure(story: string, values: Record<string, unknown>): void {
  console.log(`real-guest figure ${story}: ${JSON.stringify(values)}`);
}

async function imageOf(w: World, name: string): Promise<string> {
  return findImageId(w.admin, name);
}

async function instanceName(w: World, id: string): Promise<string> {
  const res = await w.admin.request('compute', 'GET', `/servers/${id}`, { microversion: '2.53' });
  return expectStatus(res, `server ${id}`, 200).body.server['OS-EXT-SRV-ATTR:instance_name'] as string;
}

/** The guest is up and its self-check has run at least twice. */
async function settled(w: World, id: string): Promise<GuestReport> {
  const r = await freshReport(w.admin, id, 0, 2);
  expect(r.crashed, 'the guest booted cleanly').toBe(false);
  expect(r.badTicks).toEqual([]);
  return r;
}

/** After a move: the same boot (no reboot), ticks after the move, no failed check, no oops. */
async function survived(w: World, id: string, before: GuestReport): Promise<GuestReport> {
  const after = await freshReport(w.admin, id, before.lastTick, 2);
  const log = `guest ${id} after the move:\n${(await consoleLog(w.admin, id)).slice(-2500)}`;
  expect(after.crashed, log).toBe(false);
  expect(after.boots, `the guest kept running: same boot, no reboot; ${log}`).toEqual(before.boots);
  expect(after.badTicks, `memory checks that failed; ${log}`).toEqual([]);
  return after;
}

function counting(): { hook: { onApiRequest: (api: string) => void }; nova: () => number } {
  let n = 0;
  return {
    hook: {
      onApiRequest: (api: string) => {
        if (api === 'nova') n++;
      },
    },
    nova: () => n,
  };
}

const stateOf = (o: Outcome, id: string) => o.workloads.find((x) => x.id === id);

describe.skipIf(!real)(
  real
    ? 'real QEMU guests under drainer'
    : `real guests: skipped, the hypervisors are ${types.join(', ') || 'unknown'}, not QEMU (NOVA_DRIVER=libvirt)`,
  () => {
    it('run-once live-migrates an idle guest, which keeps running with its memory intact', async () => {
      const w = world();
      const { sourceHost: source, targetHost: target } = w.settings;
      const [server] = await w.boot([{ label: 'idle', image: await imageOf(w, 'drainer-guest') }]);
      const id = server!.id;
      const before = await settled(w, id);

      const started = Date.now();
      const run = await cli().drainer(['run-once', '--node', source]);
      const wallMs = Date.now() - started;
      expect(run.code, tail(run)).toBe(0);
      const moved = await getServer(w.admin, id);
      expect(moved).toMatchObject({ status: 'ACTIVE', host: target, taskState: null });
      expect((await migrationsOf(w.admin, id)).map((m) => [m.migrationType, m.status])).toEqual([
        ['live-migration', 'completed'],
      ]);
      await survived(w, id, before);
      const job = await completedJob(target, await instanceName(w, id));
      figure('idle run-once', { wallMs, ...job });
      expect(job.downtimeMs, 'libvirt measured a downtime').toBeGreaterThan(0);

      const back = await cli().drainer(['restore', '--node', source]);
      expect(back.code, tail(back)).toBe(0);
    });

    it('moves a busy guest that converges, and its memory survives', async () => {
      const w = world();
      const { sourceHost: source, targetHost: target } = w.settings;
      const [server] = await w.boot([{ label: 'busy', image: await imageOf(w, 'drainer-guest-busy') }]);
      const before = await settled(w, server!.id);
      const calls = counting();
      const plugin = await novaPlugin(w.cloud, { stallAfter: 60 }, calls.hook);

      const started = Date.now();
      const { outcome, record } = await evacuate(plugin, source);
      const wallMs = Date.now() - started;
      expect(outcome.succeeded, JSON.stringify(outcome)).toBe(true);
      expect(stateOf(outcome, server!.id)).toMatchObject({ state: 'succeeded', target });
      expect(await getServer(w.admin, server!.id)).toMatchObject({ status: 'ACTIVE', host: target });
      await survived(w, server!.id, before);
      const job = await completedJob(target, await instanceName(w, server!.id));
      figure('busy converges', { wallMs, novaRequests: calls.nova(), ...job });
      await restore(plugin, source, record);
    });

    it('ends a migration that cannot converge by its stall detection and force-complete', async () => {
      const w = world();
      const { sourceHost: source, targetHost: target } = w.settings;
      const [server] = await w.boot([{ label: 'hot', image: await imageOf(w, 'drainer-guest-hot') }]);
      const id = server!.id;
      const before = await settled(w, id);
      const calls = counting();
      const plugin = await novaPlugin(w.cloud, { stallAfter: 15, onStall: 'force-complete' }, calls.hook);

      const started = Date.now();
      const { outcome, record } = await evacuate(plugin, source);
      const wallMs = Date.now() - started;
      const mine = stateOf(outcome, id);
      expect(outcome.succeeded, JSON.stringify(outcome)).toBe(true);
      expect(mine).toMatchObject({ state: 'succeeded', target });
      expect(mine?.message ?? '', 'the report says it was forced').toMatch(/forc/i);
      expect(await getServer(w.admin, id)).toMatchObject({ status: 'ACTIVE', host: target });
      const job = await completedJob(target, await instanceName(w, id));
      const after = readReport(await consoleLog(w.admin, id));
      figure('hot forced', { wallMs, novaRequests: calls.nova(), ...job, guestAfter: after });
      await survived(w, id, before);
      await restore(plugin, source, record);
    });

    it('an uncordon mid-migration aborts it: the guest stays on its host, running, memory intact', async () => {
      const w = world();
      const { sourceHost: source } = w.settings;
      const [server] = await w.boot([{ label: 'uncordon', image: await imageOf(w, 'drainer-guest-hot') }]);
      const id = server!.id;
      const before = await settled(w, id);
      const plugin = await novaPlugin(w.cloud, { stallAfter: 600, onStall: 'wait' });
      const uncordon = new AbortController();

      const run = evacuate(plugin, source, 600_000, { cancel: uncordon.signal, abortOnCancel: true });
      await waitFor(
        async () => (await migrationsOf(w.admin, id)).some((m) => m.status === 'running') || undefined,
        { what: `the live migration of ${id} running`, intervalMs: 500 },
      );
      await new Promise((r) => setTimeout(r, 5000)); // it copies for a while: this is mid-migration
      const abortedAt = Date.now();
      uncordon.abort(new CancelledError('uncordoned'));
      const { outcome, record } = await run;
      const settleMs = Date.now() - abortedAt;

      expect(outcome.succeeded).toBe(false);
      expect(stateOf(outcome, id)?.message ?? '').toMatch(/cancel/i);
      const s = await waitServer(w.admin, id, 'ACTIVE');
      expect(s.host, 'the abort won: the guest is where it was').toBe(source);
      const last = (await migrationsOf(w.admin, id)).at(-1);
      expect(last?.status).toBe('cancelled');
      figure('uncordon abort', { settleMs, migration: last?.status });
      await survived(w, id, before);
      await restore(plugin, source, record);
    });

    it('cold: resizes and confirms, and the guest boots again on the other host', async () => {
      const w = world();
      const { sourceHost: source, targetHost: target } = w.settings;
      const [server] = await w.boot([{ label: 'cold', image: await imageOf(w, 'drainer-guest') }]);
      const id = server!.id;
      const before = await settled(w, id);
      await setWay(w, id, 'cold');
      const calls = counting();
      const plugin = await novaPlugin(w.cloud, {}, calls.hook);

      const started = Date.now();
      const { outcome, record } = await evacuate(plugin, source);
      const wallMs = Date.now() - started;
      expect(outcome.succeeded, JSON.stringify(outcome)).toBe(true);
      expect(await getServer(w.admin, id)).toMatchObject({ status: 'ACTIVE', host: target, taskState: null });
      const kinds = (await migrationsOf(w.admin, id)).map((m) => [m.migrationType, m.status]);
      expect(kinds).toEqual([['migration', 'confirmed']]);
      const after = await freshReport(w.admin, id, 0, 2);
      expect(after.crashed).toBe(false);
      expect(after.badTicks).toEqual([]);
      expect(after.boots.at(-1), 'a cold move is a new boot').not.toBe(before.boots.at(-1));
      figure('cold', { wallMs, novaRequests: calls.nova() });
      await restore(plugin, source, record);
    });

    it('stop on a guest that ignores ACPI: Nova waits shutdown_timeout; an uncordon inside it, and the VM runs again', async () => {
      const w = world();
      const { sourceHost: source } = w.settings;
      const [server] = await w.boot([{ label: 'deaf', image: await imageOf(w, 'drainer-guest-deaf') }]);
      const id = server!.id;
      await settled(w, id);
      await setWay(w, id, 'stop');
      const plugin = await novaPlugin(w.cloud, {});
      const uncordon = new AbortController();

      const started = Date.now();
      const run = evacuate(plugin, source, 600_000, {
        cancel: uncordon.signal,
        abortOnCancel: true,
        reboot: true,
      });
      await waitFor(
        async () => ((await getServer(w.admin, id))?.taskState === 'powering-off' ? true : undefined),
        {
          what: `${id} powering off`,
          intervalMs: 250,
        },
      );
      await new Promise((r) => setTimeout(r, 5000)); // inside Nova's 20 s wait for a guest that never answers
      expect((await getServer(w.admin, id))?.taskState, 'still waiting for the guest').toBe('powering-off');
      // the guest itself saw no reason to go (a stopped guest's console is gone: read it now)
      expect(readReport(await consoleLog(w.admin, id)).poweredOff, 'the guest never answered ACPI').toBe(
        false,
      );
      uncordon.abort(new CancelledError('uncordoned'));
      const { outcome, record } = await run;
      const off = await waitServer(w.admin, id, 'SHUTOFF');
      const stopMs = Date.now() - started;
      expect(stopMs, 'Nova waited out shutdown_timeout (20 s) before destroying it').toBeGreaterThanOrEqual(
        20_000,
      );
      await restore(plugin, source, record);
      const again = await waitFor(
        async () => {
          const s = await getServer(w.admin, id);
          return s?.status === 'ACTIVE' && s.taskState === null ? s : undefined;
        },
        { what: `${id} running again after the uncordon`, timeoutMs: 120_000 },
      );
      expect(again.host).toBe(source);
      figure('stop deaf', { stopMs, outcome: stateOf(outcome, id)?.message, off: off.status });
    });

    it('nova.onError last: a server whose guest crashed (ERROR) is tried after the others, and stays', async () => {
      const w = world();
      const { sourceHost: source, targetHost: target } = w.settings;
      const [healthy, crashed] = await w.boot([
        { label: 'ok', image: await imageOf(w, 'drainer-guest') },
        { label: 'crashed', image: await imageOf(w, 'drainer-guest') },
      ]);
      const before = await settled(w, healthy!.id);
      // the guest dies under Nova (its QEMU destroyed on the host), and the operator's Nova marks it ERROR
      await destroyGuest(source, await instanceName(w, crashed!.id));
      await serverAction(w.admin, crashed!.id, { 'os-resetState': { state: 'error' } });
      await waitServer(w.admin, crashed!.id, 'ERROR');
      const plugin = await novaPlugin(w.cloud, { onError: 'last', retries: 0 });

      const { outcome, record } = await evacuate(plugin, source);
      expect(outcome.succeeded).toBe(false);
      expect(stateOf(outcome, healthy!.id)).toMatchObject({ state: 'succeeded', target });
      expect(stateOf(outcome, crashed!.id)?.state).toBe('failed');
      expect(await getServer(w.admin, healthy!.id)).toMatchObject({ status: 'ACTIVE', host: target });
      expect(await getServer(w.admin, crashed!.id)).toMatchObject({ status: 'ERROR', host: source });
      await survived(w, healthy!.id, before);
      figure('onError last', { crashed: stateOf(outcome, crashed!.id)?.message });
      await restore(plugin, source, record);
    });
  },
);

async function setWay(w: World, id: string, way: string): Promise<void> {
  const res = await w.admin.request('compute', 'PUT', `/servers/${id}/metadata/drainer.dev:maintenance`, {
    json: { meta: { 'drainer.dev:maintenance': way } },
  });
  expectStatus(res, `metadata of ${id}`, 200);
}
