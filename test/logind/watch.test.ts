// The shutdown watch against a fake bus that speaks logind's wire (fake-logind.ts), with a fake lock.
import { afterEach, describe, expect, it } from 'vitest';
import { BusError, openBus, type Bus } from '../../src/logind/bus.ts';
import type { DelayLock, TakeDelayLock } from '../../src/logind/inhibitor.ts';
import { ShutdownWatch, type ShutdownStart } from '../../src/logind/watch.ts';
import { startFakeLogind } from './fake-logind.ts';

/** A lock that records what happened to it. */
function fakeLocks() {
  const events: string[] = [];
  let n = 0;
  const take: TakeDelayLock = (why) => {
    const id = ++n;
    events.push(`take ${id}: ${why}`);
    let lose = () => {};
    const lock: DelayLock & { lose(): void } = {
      lost: new Promise<void>((r) => (lose = r)),
      release: () => {
        events.push(`release ${id}`);
        lose();
        return Promise.resolve();
      },
      lose: () => lose(),
    };
    return Promise.resolve(lock);
  };
  return { events, take };
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setUp(o: { inhibitDelayMaxUSec?: bigint } = {}) {
  const logind = await startFakeLogind(o);
  const bus = await openBus(logind.socketPath);
  cleanups.push(
    () => logind.close(),
    () => bus.close(),
  );
  const locks = fakeLocks();
  const starts: ShutdownStart[] = [];
  let clock = 1_000_000;
  const watch = await ShutdownWatch.start({
    bus,
    takeLock: locks.take,
    marginMs: 3000,
    onShutdown: (s) => starts.push(s),
    now: () => clock,
  });
  return { logind, bus, locks, starts, watch, tick: (ms: number) => (clock += ms) };
}

/** Waits for the signal the fake just sent to come through the socket (a round-trip on the same connection). */
async function roundTrip(bus: Bus): Promise<void> {
  await bus.call({
    destination: 'org.freedesktop.DBus',
    path: '/org/freedesktop/DBus',
    interface: 'org.freedesktop.DBus',
    member: 'Hello',
  });
}

describe('the shutdown watch', () => {
  it("reads logind's cap on delay locks from InhibitDelayMaxUSec", async () => {
    const { watch } = await setUp({ inhibitDelayMaxUSec: 90_000_000n });
    expect(watch.delayMaxMs).toBe(90_000);
  });

  it('holds the lock only while the node hosts VMs', async () => {
    const { watch, locks } = await setUp();
    await watch.want(false);
    expect(watch.held).toBe(false);
    await watch.want(true);
    await watch.want(true);
    expect(watch.held).toBe(true);
    await watch.want(false);
    expect(watch.held).toBe(false);
    expect(locks.events).toEqual([
      'take 1: live-migrating VMs off this node before it goes down',
      'release 1',
    ]);
  });

  it('on PrepareForShutdown(true) with the lock held, hands over the time to give it back: the cap minus the margin', async () => {
    const { logind, bus, watch, starts } = await setUp({ inhibitDelayMaxUSec: 30_000_000n });
    await watch.want(true);
    logind.prepareForShutdown(true);
    await roundTrip(bus);
    expect(starts).toEqual([
      {
        at: 1_000_000,
        delayMaxMs: 30_000,
        releaseBy: 1_000_000 + 30_000 - 3000,
        deadline: 1_000_000 + 30_000,
      },
    ]);
  });

  it('keeps the margin to half of a short cap, so some time is left to evacuate', async () => {
    const { logind, bus, watch, starts } = await setUp({ inhibitDelayMaxUSec: 4_000_000n });
    await watch.want(true);
    logind.prepareForShutdown(true);
    await roundTrip(bus);
    expect(starts[0]?.releaseBy).toBe(1_000_000 + 2000);
  });

  it('does nothing on a shutdown while it holds no lock (a node without VMs is not delayed)', async () => {
    const { logind, bus, starts } = await setUp();
    logind.prepareForShutdown(true);
    await roundTrip(bus);
    expect(starts).toEqual([]);
  });

  it('keeps the lock through the shutdown while still wanted, gives it back on release, and takes none anew until the shutdown is cancelled', async () => {
    const { logind, bus, watch, locks, starts } = await setUp();
    await watch.want(true);
    logind.prepareForShutdown(true);
    logind.prepareForShutdown(true);
    await roundTrip(bus);
    expect(starts).toHaveLength(1);
    await watch.want(true);
    expect(watch.held).toBe(true);
    await watch.release();
    await watch.want(true);
    expect(watch.held).toBe(false);
    logind.prepareForShutdown(false);
    await roundTrip(bus);
    await watch.want(true);
    expect(watch.held).toBe(true);
    expect(locks.events.filter((e) => e.startsWith('take'))).toHaveLength(2);
  });

  it('evacuates for a shutdown that comes while the lock is being taken: logind already lists it and waits for it', async () => {
    const locks = fakeLocks();
    let taken = () => {};
    const slowly: TakeDelayLock = async (why) => {
      const lock = await locks.take(why); // systemd-inhibit holds it; its holder has not said so yet
      await new Promise<void>((r) => (taken = r));
      return lock;
    };
    const logind = await startFakeLogind();
    const bus = await openBus(logind.socketPath);
    cleanups.push(
      () => logind.close(),
      () => bus.close(),
    );
    const starts: ShutdownStart[] = [];
    const w = await ShutdownWatch.start({
      bus,
      takeLock: slowly,
      marginMs: 1000,
      onShutdown: (s) => starts.push(s),
    });
    const wanting = w.want(true);
    logind.prepareForShutdown(true);
    await roundTrip(bus);
    taken();
    await wanting;
    await until(() => starts.length === 1);
    expect(w.held).toBe(true);
  });

  it('forgets a lock whose holder ended by itself, and takes a new one when asked', async () => {
    const locks = fakeLocks();
    const taken: DelayLock[] = [];
    const take: TakeDelayLock = async (why) => {
      const l = await locks.take(why);
      taken.push(l);
      return l;
    };
    const logind = await startFakeLogind();
    const bus = await openBus(logind.socketPath);
    cleanups.push(
      () => logind.close(),
      () => bus.close(),
    );
    const w = await ShutdownWatch.start({ bus, takeLock: take, marginMs: 1000, onShutdown: () => {} });
    await w.want(true);
    (taken[0] as DelayLock & { lose(): void }).lose();
    await taken[0]?.lost;
    expect(w.held).toBe(false);
    await w.want(true);
    expect(w.held).toBe(true);
  });

  it("fails to start on a bus without logind, with D-Bus's own error name", async () => {
    const logind = await startFakeLogind({ login1: false });
    const bus = await openBus(logind.socketPath);
    cleanups.push(
      () => logind.close(),
      () => bus.close(),
    );
    const err = await ShutdownWatch.start({
      bus,
      takeLock: fakeLocks().take,
      marginMs: 1000,
      onShutdown: () => {},
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusError);
    expect((err as BusError).dbusName).toBe('org.freedesktop.DBus.Error.ServiceUnknown');
  });

  it('says which socket it could not reach when there is no system bus', async () => {
    const err = await openBus('/nonexistent/system_bus_socket').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusError);
    expect((err as Error).message).toMatch(/^system bus \/nonexistent\/system_bus_socket: .*ENOENT/);
  });
});

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(ok()).toBe(true);
}
