// Nova moves are judged by where they land (issue 48): a cold migration cannot be stopped, so it is
// never reported failed while Nova still moves it; drainer confirms every resize it asked for (past
// its deadline, after an uncordon, after a lost answer, after a restart of the agent); and a move that
// is not drainer's (an owner's resize, an operator's live migration) is followed, never aborted nor
// confirmed by drainer. Against the sandbox Nova, on a clock 100× faster.
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../../src/errors.ts';
import { ComputeClient } from '../../../src/plugins/nova/compute.ts';
import { MAINTENANCE_KEY } from '../../../src/plugins/nova/policy.ts';
import type { NovaServer } from '../../../src/plugins/nova/types.ts';
import type { NovaFaults, ServerSpec } from '../../../src/sandbox/openstack/index.ts';
import { until } from '../../sandbox/openstack/client.ts';
import { captureLogger } from './helpers.ts';
import { sandboxDrainer, type SandboxDrainer } from './sandbox-drainer.ts';
import { line, onComputeA, sandboxNova } from './sandbox-nova.ts';

const sb = sandboxNova();

/** A server on compute-a whose owner chose the cold way out; a cold move takes `migrationMs`. */
const cold = (name: string, migrationMs = 20_000): ServerSpec =>
  onComputeA(name, { migrationMs, metadata: { [MAINTENANCE_KEY]: 'cold' } });

async function sandbox(
  servers: ServerSpec[],
  faults: Partial<NovaFaults> = {},
  hosts = ['compute-a', 'compute-b'],
) {
  return sb.start({ hosts: hosts.map((name) => ({ name })), servers, faults });
}

/** Someone else's call through Nova's API (the admin token). */
const someone = (path: string, body: unknown) => sb.asAdmin('POST', path, body);

/** The first POST to `path` is applied, but its answer is lost on the way. */
const dropFirst = (path: string) => {
  let dropped = false;
  return (method: string, p: string) => {
    if (dropped || method !== 'POST' || !p.endsWith(path)) return false;
    dropped = true;
    return true;
  };
};

const isConfirm = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && 'confirmResize' in body;
const migrations = (id: string) => sb.cloud.state.migrations(id).map((m) => [m.type, m.status]);
/**
 * A restore asks for the confirm and returns at Nova's 202; Nova confirms after it (confirming, then
 * confirmed), so on a loaded machine a read right after the restore can come between the two.
 */
const confirmedByNova = (id: string) =>
  until(
    () => (sb.cloud.state.migrations(id)[0]?.status === 'confirmed' ? true : undefined),
    `${id}'s first migration confirmed`,
  );
const moving = (id: string, status: string) =>
  until(
    () => (sb.cloud.state.migrations(id).at(-1)?.status === status ? true : undefined),
    `${id} ${status}`,
  );
const resized = (id: string, what: string) =>
  until(() => (sb.cloud.state.server(id)?.status === 'VERIFY_RESIZE' ? true : undefined), what);

/** vm's agent shut down mid-move and the resize landed while none ran; `next` is the agent started again. */
async function restartedAfterLanding(
  faults: Partial<NovaFaults> = {},
): Promise<{ first: SandboxDrainer; next: SandboxDrainer }> {
  const clock = await sandbox([cold('vm')], faults);
  const first = sandboxDrainer(sb.cloud, clock);
  await stoppedMidMove(first);
  return { first, next: sandboxDrainer(sb.cloud, clock) };
}

/** The agent shuts down while Nova cold-migrates vm; the resize lands (VERIFY_RESIZE) while none runs. */
async function stoppedMidMove(d: SandboxDrainer): Promise<void> {
  const shutdown = new AbortController();
  const run = d.evacuate({ signal: shutdown.signal });
  await moving('vm', 'migrating');
  shutdown.abort(new Error('agent shut down'));
  await run;
  await resized('vm', 'landed');
}

describe('a cold migration is judged by where it lands', () => {
  it('past nova.migrationTimeout it is overdue, still followed, and drainer confirms it where it lands', async () => {
    const clock = await sandbox([cold('vm', 120_000)]);
    const d = sandboxDrainer(sb.cloud, clock, { migrationTimeout: 30 });

    const outcome = await d.evacuate();

    expect(line(outcome, 'vm')).toMatchObject({
      state: 'succeeded',
      action: 'cold-migrate',
      target: 'compute-b',
    });
    expect(line(outcome, 'vm')?.message).toMatch(/after its deadline/);
    expect(outcome.succeeded).toBe(true);
    expect(migrations('vm')).toEqual([['migration', 'confirmed']]);
    expect(sb.cloud.state.server('vm')).toMatchObject({ host: 'compute-b', status: 'ACTIVE' });
  });

  it('an uncordon with abortOnCancel during it aborts nothing: the move is followed to its end and confirmed', async () => {
    // on a ×5 clock: the cancel follows a cold move 20 s (simulated), the move lands at most 8 s after the
    // uncordon, and the 12 s between are 2.4 s real, which a loaded machine cannot eat (at ×100 they
    // were 0.12 s, and the cancel gave up with the move still landing: state migrating)
    const clock = await sb.start(
      { hosts: [{ name: 'compute-a' }, { name: 'compute-b' }], servers: [cold('vm', 8_000)] },
      5,
    );
    const d = sandboxDrainer(sb.cloud, clock);
    const uncordon = new AbortController();

    const run = d.evacuate({ signal: uncordon.signal, abortOnCancel: true });
    await moving('vm', 'migrating');
    uncordon.abort(new CancelledError('node uncordoned'));
    const outcome = await run;

    expect(line(outcome, 'vm')).toMatchObject({ state: 'succeeded', target: 'compute-b' });
    expect(migrations('vm')).toEqual([['migration', 'confirmed']]);
    expect(sb.cloud.state.server('vm')?.status).toBe('ACTIVE');
  });

  it('an uncordon during a long one: the cancel follows it a while, not failed, and the restore that follows confirms it', async () => {
    const clock = await sandbox([cold('vm', 120_000)]);
    const d = sandboxDrainer(sb.cloud, clock);
    const uncordon = new AbortController();

    const run = d.evacuate({ signal: uncordon.signal, abortOnCancel: true });
    await moving('vm', 'migrating');
    uncordon.abort(new CancelledError('node uncordoned'));
    const outcome = await run;
    await d.restore();
    await confirmedByNova('vm');

    expect(line(outcome, 'vm')).toMatchObject({ state: 'migrating' });
    expect(line(outcome, 'vm')?.message).toMatch(/restore confirms its resize/);
    expect(migrations('vm')).toEqual([['migration', 'confirmed']]);
  });

  it('a restarted agent confirms the resize its predecessor asked for, which landed while no agent ran', async () => {
    const { first, next } = await restartedAfterLanding();

    next.resumeFrom(first.record());
    const outcome = await next.evacuate();

    expect(line(outcome, 'vm')).toMatchObject({ state: 'succeeded', target: 'compute-b' });
    expect(migrations('vm')).toEqual([['migration', 'confirmed']]);
  });
});

describe('a record of the previous version (no move kind)', () => {
  it('is adopted: the restarted agent confirms the resize its predecessor asked for', async () => {
    const { first, next } = await restartedAfterLanding();
    const written = first.record()!;
    const { vm } = written.migrations as Record<string, Record<string, unknown>>;
    const { move: _move, ...previous } = vm!;

    next.resumeFrom({ ...written, migrations: { vm: previous } });
    const outcome = await next.evacuate();

    expect(previous).toMatchObject({ attempts: 1 });
    expect(line(outcome, 'vm')).toMatchObject({ state: 'succeeded', target: 'compute-b' });
    expect(migrations('vm')).toEqual([['migration', 'confirmed']]);
  });
});

describe('restore confirms the resizes drainer asked for', () => {
  it('the agent stopped mid-move and the node was uncordoned meanwhile: the restore confirms the resize that landed', async () => {
    const { first, next } = await restartedAfterLanding();

    next.resumeFrom(first.record());
    await next.restore();

    await confirmedByNova('vm');
    expect(sb.cloud.state.server('vm')).toMatchObject({ host: 'compute-b', status: 'ACTIVE' });
  });

  it("the restore's confirm answered 503 (the answer lost, nothing applied): read back, still waiting, confirmed again", async () => {
    // a lost answer was the end of it: the server stayed in VERIFY_RESIZE, with only a warning said
    let refused = 0;
    const { first, next } = await restartedAfterLanding({
      refuse: (method, path, body) =>
        method === 'POST' && path.endsWith('/servers/vm/action') && isConfirm(body) && refused++ === 0
          ? { status: 503, message: 'Service Unavailable' }
          : undefined,
    });

    next.resumeFrom(first.record());
    await next.restore();

    expect(refused).toBe(2); // the refused one, and the one sent again
    await confirmedByNova('vm');
    expect(migrations('vm')).toEqual([['migration', 'confirmed']]);
  });

  it("a server drainer moved away, then moved on by the next host's agent: that agent's resize is its to confirm, not this host's restore", async () => {
    // seed 491248's soak: both agents confirmed it, the later one answered 400 "Instance has not been resized"
    const clock = await sandbox([cold('vm', 2_000)], {}, ['compute-a', 'compute-b', 'compute-c']);
    const a = sandboxDrainer(sb.cloud, clock);
    await a.evacuate();
    const b = sandboxDrainer(sb.cloud, clock, {}, ComputeClient, 'compute-b');
    await stoppedMidMove(b);

    await a.restore();
    await confirmedByNova('vm');

    expect(migrations('vm')).toEqual([
      ['migration', 'confirmed'],
      ['migration', 'finished'],
    ]);
  });

  describe("the agent of the host it landed on confirms it between the restore's read and its confirm", () => {
    // seed 1's soak: hv-2's agent, evacuating the host the resize had landed on, confirmed it a moment
    // before hv-1-b's restore did, and the restore logged Nova's 400 as a failed confirm
    class ConfirmedFirst extends ComputeClient {
      override async confirmResize(id: string, signal?: AbortSignal) {
        await someone(`/servers/${id}/action`, { confirmResize: null });
        return super.confirmResize(id, signal);
      }
    }
    async function restoreConfirmedFirst(resizeFinishMs: number): Promise<string[]> {
      const clock = await sb.start({
        hosts: [{ name: 'compute-a' }, { name: 'compute-b' }],
        servers: [cold('vm')],
        timings: { resizeFinishMs },
      });
      const gone = sandboxDrainer(sb.cloud, clock);
      await stoppedMidMove(gone);
      const { log, lines } = captureLogger();
      const next = sandboxDrainer(sb.cloud, clock, {}, ConfirmedFirst, 'compute-a', log);
      next.resumeFrom(gone.record());
      await next.restore();
      await confirmedByNova('vm');
      expect(migrations('vm')).toEqual([['migration', 'confirmed']]);
      return lines;
    }
    const answers = (lines: string[]) => lines.filter((l) => /→ 4\d\d/.test(l)).map((l) => l.slice(0, 300));
    const saysConfirmedByAnother = (lines: string[]) =>
      lines.some((l) => l.includes('resize already confirmed or reverted by another'));

    it("while the other's confirm is under way, Nova answers 400 'not resized': that race, not a failure", async () => {
      const lines = await restoreConfirmedFirst(60_000);
      expect(answers(lines)).toEqual([]);
      expect(saysConfirmedByAnother(lines)).toBe(true);
    });

    it("once the other's confirm is done, Nova answers 409 (no longer resized): the same", async () => {
      const lines = await restoreConfirmedFirst(0);
      expect(answers(lines)).toEqual([]);
      expect(saysConfirmedByAnother(lines)).toBe(true);
    });
  });

  it("an owner's resize of a server drainer once cold-migrated is theirs to confirm: restore leaves it", async () => {
    const clock = await sandbox([cold('vm')], {}, ['compute-a', 'compute-b', 'compute-c']);
    const d = sandboxDrainer(sb.cloud, clock);
    await d.evacuate();
    await someone('/servers/vm/action', { resize: { flavorRef: 'flavor-c2-r1024-d10' } });
    await resized('vm', 'resized');

    await d.restore();

    expect(migrations('vm')).toEqual([
      ['migration', 'confirmed'],
      ['resize', 'finished'],
    ]);
  });
});

describe('the agent stops for good while its cold migration runs (no successor comes)', () => {
  it('a move that lands within the stop is confirmed there', async () => {
    const clock = await sandbox([cold('vm')]);
    const d = sandboxDrainer(sb.cloud, clock);
    await stoppedMidMove(d);

    await d.leftForGood(AbortSignal.timeout(10_000));

    await confirmedByNova('vm');
    expect(sb.cloud.state.server('vm')).toMatchObject({ host: 'compute-b', status: 'ACTIVE' });
  });

  it('one still moving when the stop ends is named, with the command that confirms it', async () => {
    const clock = await sandbox([cold('vm', 3_600_000)]);
    const { log, lines } = captureLogger();
    const d = sandboxDrainer(sb.cloud, clock, {}, ComputeClient, 'compute-a', log);
    const shutdown = new AbortController();
    const run = d.evacuate({ signal: shutdown.signal });
    await moving('vm', 'migrating');
    shutdown.abort(new Error('agent shut down'));
    await run;

    await d.leftForGood(AbortSignal.timeout(300));

    expect(migrations('vm')).toEqual([['migration', 'migrating']]);
    expect(
      lines.some(
        (l) =>
          l.includes('still ran when its agent stopped for good') &&
          l.includes('openstack server resize confirm vm'),
      ),
    ).toBe(true);
  });
});

describe("a 409 on drainer's move: whose move is it?", () => {
  it("drainer's own earlier migrate, whose answer and read-back were lost: drainer's move, followed and confirmed", async () => {
    // the first migrate is applied but its answer is lost
    const clock = await sandbox([cold('vm')], { dropAnswer: dropFirst('/servers/vm/action') });
    // and so is the read-back right after it: the next poll finds the server pending, and sends again
    let readBackLost = false;
    class LostReadBack extends ComputeClient {
      override async getServer(id: string, signal?: AbortSignal) {
        if (!readBackLost && sb.cloud.state.migrations('vm').length > 0) {
          readBackLost = true;
          throw new Error('socket hang up');
        }
        return super.getServer(id, signal);
      }
    }
    const d = sandboxDrainer(sb.cloud, clock, {}, LostReadBack);

    const outcome = await d.evacuate();

    expect(readBackLost).toBe(true);
    expect(line(outcome, 'vm')).toMatchObject({ state: 'succeeded', target: 'compute-b', attempts: 1 });
    expect(migrations('vm')).toEqual([['migration', 'confirmed']]);
  });

  it("drainer's own earlier migrate, lost, met as Nova's 409 to the next one: drainer's move, confirmed", async () => {
    const clock = await sandbox([cold('vm')], { dropAnswer: dropFirst('/servers/vm/action') });
    // the read-back is lost too, and the next listing is a stale one (a replica behind): the server
    // looks idle, so drainer sends migrate again, and Nova answers 409
    let stale: NovaServer | undefined;
    class Behind extends ComputeClient {
      override async getServer(id: string, signal?: AbortSignal) {
        if (!stale && sb.cloud.state.migrations('vm').length > 0) {
          stale = (await super.listServersOnHost('compute-a', signal)).find((s) => s.id === 'vm');
          if (stale) stale = { ...stale, status: 'SHUTOFF', 'OS-EXT-STS:task_state': null };
          throw new Error('socket hang up');
        }
        return super.getServer(id, signal);
      }
      override async listServersOnHost(...args: Parameters<ComputeClient['listServersOnHost']>) {
        const listed = await super.listServersOnHost(...args);
        if (!stale || conflicts > 0) return listed;
        return listed.map((s) => (s.id === 'vm' ? stale! : s));
      }
      override async listServersChangedSince(...args: Parameters<ComputeClient['listServersChangedSince']>) {
        const changed = await super.listServersChangedSince(...args);
        if (!stale || conflicts > 0) return changed;
        return { ...changed, servers: changed.servers.map((s) => (s.id === 'vm' ? stale! : s)) };
      }
      override async migrate(id: string, signal?: AbortSignal) {
        try {
          return await super.migrate(id, signal);
        } catch (err) {
          if ((err as { status?: number }).status === 409) conflicts++;
          throw err;
        }
      }
    }
    let conflicts = 0;
    const d = sandboxDrainer(sb.cloud, clock, {}, Behind);

    const outcome = await d.evacuate();

    expect(conflicts).toBe(1);
    expect(line(outcome, 'vm')).toMatchObject({ state: 'succeeded', target: 'compute-b', attempts: 1 });
    expect(migrations('vm')).toEqual([['migration', 'confirmed']]);
  });

  it("the owner's resize met as 409 while drainer's window is full, then an uncordon: followed as theirs, neither aborted, failed nor confirmed by drainer", async () => {
    // 'first' holds Nova's one slot, so the owner's resize is not counted in a slot: the cancel took it
    // for a queued live migration of drainer's, and finished it failed
    const live: ServerSpec = {
      id: 'first',
      name: 'first',
      projectId: 'demo',
      host: 'compute-a',
      migrationMs: 120_000,
    };
    const clock = await sandbox([live, cold('vm', 60_000)]);
    let refused = false;
    class OwnerResizesFirst extends ComputeClient {
      override async migrate(id: string, signal?: AbortSignal) {
        await someone(`/servers/${id}/action`, { resize: { flavorRef: 'flavor-c2-r4096-d10' } });
        try {
          return await super.migrate(id, signal);
        } finally {
          refused = true;
        }
      }
    }
    const d = sandboxDrainer(sb.cloud, clock, {}, OwnerResizesFirst);
    const uncordon = new AbortController();
    let followed = false;
    const progress = (items: readonly { name: string; state: string }[]) =>
      (followed ||= refused && items.some((w) => w.name === 'vm' && w.state === 'migrating'));

    const run = d.evacuate({ signal: uncordon.signal, progress });
    await until(() => followed || undefined, "the owner's resize followed");
    uncordon.abort(new CancelledError('node uncordoned'));
    const outcome = await run;
    await resized('vm', 'landed');

    expect(line(outcome, 'vm')?.state).not.toBe('failed');
    expect(line(outcome, 'vm')?.attempts).toBe(0);
    expect(migrations('vm')).toEqual([['resize', 'finished']]);
  });

  it("an operator's own live migration, then an uncordon with abortOnCancel: drainer does not abort it", async () => {
    const clock = await sandbox([
      { id: 'vm', name: 'vm', projectId: 'demo', host: 'compute-a', migrationMs: 60_000 },
    ]);
    await someone('/servers/vm/action', { 'os-migrateLive': { host: null, block_migration: 'auto' } });
    await moving('vm', 'running');
    const d = sandboxDrainer(sb.cloud, clock);
    const uncordon = new AbortController();

    let adopted = false;
    const progress = (items: readonly { state: string }[]) => (adopted ||= items[0]?.state === 'migrating');
    const run = d.evacuate({ signal: uncordon.signal, abortOnCancel: true, progress });
    await until(() => adopted || undefined, 'adopted');
    uncordon.abort(new CancelledError('node uncordoned'));
    const outcome = await run;
    await until(() => (sb.cloud.state.migrations('vm')[0]?.status !== 'running' ? true : undefined), 'ended');

    expect(line(outcome, 'vm')?.state).not.toBe('failed');
    expect(migrations('vm')).toEqual([['live-migration', 'completed']]);
  });

  it("an operator's own live migration past drainer's deadline: followed, not aborted", async () => {
    const clock = await sandbox([
      { id: 'vm', name: 'vm', projectId: 'demo', host: 'compute-a', migrationMs: 120_000 },
    ]);
    await someone('/servers/vm/action', { 'os-migrateLive': { host: null, block_migration: 'auto' } });
    await moving('vm', 'running');
    const d = sandboxDrainer(sb.cloud, clock, { migrationTimeout: 30 });

    const outcome = await d.evacuate();
    await until(() => (sb.cloud.state.migrations('vm')[0]?.status !== 'running' ? true : undefined), 'ended');

    expect(line(outcome, 'vm')).toMatchObject({ state: 'succeeded', target: 'compute-b' });
    expect(migrations('vm')).toEqual([['live-migration', 'completed']]);
  });
});
