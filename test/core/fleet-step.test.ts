// Story: with a fleet budget, a node waits for a slot before its first change. While it waits its
// record says Queued and its Node carries the queue label; both come and go in the same record
// write. A resumed evacuation that lost its slot waits Queued again, in its old place.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import type { EvacuationBudget, Slot, SlotWait } from '../../src/core/fleet/types.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import {
  parseRecord,
  QUEUED_LABEL,
  STATE_ANNOTATION,
  type NodeRecord,
} from '../../src/core/record/record.ts';
import { TransientError } from '../../src/errors.ts';
import { FakeCluster, FakeHost, quietLogger, succeeded } from './fakes.ts';

const SLOT = 'drainer-evacuation-0';

/** One slot, held by node-9 until `handOver()`; or still held by `holder` (a resumed evacuation). */
class OneSlot implements EvacuationBudget {
  enqueued = 0;
  released = 0;
  #waiting!: () => void;
  readonly waiting = new Promise<void>((r) => (this.#waiting = r));
  #handOver!: () => void;
  readonly #handed = new Promise<void>((r) => (this.#handOver = r));
  readonly holder: string | undefined;

  constructor(holder?: string) {
    this.holder = holder;
  }

  handOver(): void {
    this.#handOver();
  }

  /** What each wait said of its place: back in an old one (waiters must hear of it) or new. */
  readonly returning: boolean[] = [];

  async acquire(o: {
    node: string;
    signal: AbortSignal;
    enqueue(): Promise<void>;
    returning?: boolean;
    resume?: string;
    onWait(w: SlotWait): void;
  }): Promise<Slot | undefined> {
    this.returning.push(o.returning ?? false);
    // taken back without queueing only as the slot the record names (budget.ts gives any other back)
    if (this.holder !== o.node || o.resume !== SLOT) {
      await o.enqueue();
      this.enqueued++;
      o.onWait({ total: 1, holders: [{ node: 'node-9', slot: SLOT, since: '2024-05-01T09:00:00.000Z' }] });
      this.#waiting();
      const aborted = new Promise<void>((r) => o.signal.addEventListener('abort', () => r()));
      await Promise.race([this.#handed, aborted]);
      if (o.signal.aborted) return undefined;
    }
    return {
      name: SLOT,
      lost: new AbortController().signal,
      release: async () => void this.released++,
      abandon: () => undefined,
    };
  }
}

function setup(budget: OneSlot) {
  const cluster = new FakeCluster();
  const host = new FakeHost([{ name: 'nova', evacuate: async () => succeeded('nova', ['vm-1']) }]);
  const config = configSchema.parse({ fleet: { maxConcurrentEvacuations: 1 } });
  const reconciler = new Reconciler({ cluster, host, config, budget, log: quietLogger() });
  const phases: string[] = [];
  cluster.listeners.add((kind, _type, obj) => {
    if (kind !== 'node') return;
    const n = obj as { metadata: { annotations?: Record<string, string> } };
    const phase = parseRecord(n.metadata.annotations?.[STATE_ANNOTATION])?.phase ?? 'InService';
    if (phases.at(-1) !== phase) phases.push(phase);
  });
  const signal = new AbortController().signal;
  const reconcile = () => reconciler.reconcile('node-7', signal);
  const label = () => cluster.node('node-7').metadata.labels?.[QUEUED_LABEL];
  return { cluster, reconciler, phases, reconcile, label };
}

/** An evacuation an earlier agent began and recorded, queued first at `queuedAt`. */
function resumed(cluster: FakeCluster, fields: Partial<NodeRecord>): void {
  cluster.addNode('node-7', { unschedulable: true }).metadata.annotations = {
    [STATE_ANNOTATION]: JSON.stringify({
      phase: 'Evacuating',
      trigger: 'cordon',
      since: '2024-05-01T10:05:00.000Z',
      queuedAt: '2024-05-01T10:00:00.000Z',
      cordonedByUs: false,
      taintedByUs: true,
      plugins: { nova: { migrations: {} } },
      ...fields,
    }),
  };
}

describe('fleet slot: waiting Queued', () => {
  it('a cordoned node waits Queued with the label set in that same write, and takes it off with Evacuating', async () => {
    const budget = new OneSlot();
    const { cluster, phases, reconcile, label } = setup(budget);
    cluster.addNode('node-7', { unschedulable: true });

    const pass = reconcile();
    await budget.waiting;
    const waiting = cluster.record('node-7');
    expect(waiting).toMatchObject({ phase: 'Queued' });
    expect(label()).toBe(String(Date.parse(waiting?.queuedAt ?? '')));
    expect(cluster.reasons()).toContain('EvacuationQueued');
    // nothing about the node changed yet: the record (with its label) is the only write
    expect(new Set(cluster.writes)).toEqual(new Set([`annotation ${STATE_ANNOTATION}`]));

    budget.handOver();
    await pass;

    expect(phases).toEqual(['Queued', 'Evacuating', 'Evacuated']);
    expect(label()).toBeUndefined();
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Evacuated', queuedAt: waiting?.queuedAt });
    expect(cluster.record('node-7')?.slot).toBeUndefined();
    expect(budget.released).toBe(1);
    // new at the tail of the queue: nobody who read it before could have missed it
    expect(budget.returning).toEqual([false]);
  });

  it('a resumed evacuation whose slot went to another node waits Queued again, in its old place, keeping its start', async () => {
    const budget = new OneSlot();
    const { cluster, phases, reconcile, label } = setup(budget);
    resumed(cluster, { slot: SLOT });

    const pass = reconcile();
    await budget.waiting;
    // `drainer status` reads the phase: it says the node waits, not that it evacuates without a slot
    const waiting = cluster.record('node-7');
    expect(waiting).toMatchObject({ phase: 'Queued', queuedAt: '2024-05-01T10:00:00.000Z' });
    expect(waiting?.slot).toBeUndefined();
    expect(label()).toBe(String(Date.parse('2024-05-01T10:00:00.000Z')));

    budget.handOver();
    await pass;

    expect(phases).toEqual(['Evacuating', 'Queued', 'Evacuating', 'Evacuated']);
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Evacuated', since: '2024-05-01T10:05:00.000Z' });
    expect(label()).toBeUndefined();
    // back in its old place: the waiters that read the queue while it evacuated must hear of it
    expect(budget.returning).toEqual([true]);
  });

  it('restarted again while Queued for its lost slot, it still resumes: no fresh plan, its start kept', async () => {
    const budget = new OneSlot();
    budget.handOver();
    const { cluster, reconcile, label } = setup(budget);
    resumed(cluster, { phase: 'Queued', resumes: true });

    await reconcile();

    expect(cluster.reasons()).not.toContain('EvacuationPlanned');
    const rec = cluster.record('node-7');
    expect(rec).toMatchObject({ phase: 'Evacuated', since: '2024-05-01T10:05:00.000Z' });
    expect(rec?.resumes).toBeUndefined();
    expect(label()).toBeUndefined();
  });

  it('such a record without a budget any more goes on Evacuating at once', async () => {
    const cluster = new FakeCluster();
    let phaseWhenPluginRan: string | undefined;
    const host = new FakeHost([
      {
        name: 'nova',
        evacuate: async () => {
          phaseWhenPluginRan = cluster.record('node-7')?.phase;
          return succeeded('nova', ['vm-1']);
        },
      },
    ]);
    const config = configSchema.parse({ fleet: { maxConcurrentEvacuations: 0 } });
    const reconciler = new Reconciler({ cluster, host, config, log: quietLogger() });
    resumed(cluster, { phase: 'Queued', resumes: true });

    await reconciler.reconcile('node-7', new AbortController().signal);

    expect(phaseWhenPluginRan).toBe('Evacuating');
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Evacuated', since: '2024-05-01T10:05:00.000Z' });
  });

  it('a resumed evacuation that still holds its slot goes straight on, never Queued', async () => {
    const budget = new OneSlot('node-7');
    const { cluster, phases, reconcile, label } = setup(budget);
    resumed(cluster, { slot: SLOT });

    await reconcile();

    expect(budget.enqueued).toBe(0);
    expect(phases).not.toContain('Queued');
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Evacuated', since: '2024-05-01T10:05:00.000Z' });
    expect(label()).toBeUndefined();
  });

  it('uncordoned while Queued: the label leaves with the restore, nothing else was written', async () => {
    const budget = new OneSlot();
    const { cluster, reconciler, reconcile, label } = setup(budget);
    cluster.addNode('node-7', { unschedulable: true });
    const pass = reconcile();
    await budget.waiting;
    expect(label()).toBeDefined();

    delete cluster.node('node-7').spec.unschedulable;
    expect(reconciler.cancel('node-7', 'node uncordoned')).toBe(true);
    expect(await pass).toEqual({ requeueAfterMs: 0 });
    await reconcile();

    expect(cluster.record('node-7')).toBeUndefined();
    expect(label()).toBeUndefined();
    expect(new Set(cluster.writes)).toEqual(new Set([`annotation ${STATE_ANNOTATION}`]));
    expect(budget.released).toBe(0);
  });
});

/** A slot always free, that notes the record's phase each time it is given back. */
function phaseAtRelease(cluster: FakeCluster): {
  budget: EvacuationBudget;
  atRelease: (string | undefined)[];
} {
  const atRelease: (string | undefined)[] = [];
  const budget: EvacuationBudget = {
    acquire: async () => ({
      name: SLOT,
      lost: new AbortController().signal,
      release: async () => void atRelease.push(cluster.record('node-7')?.phase),
      abandon: () => undefined,
    }),
  };
  return { budget, atRelease };
}

describe('fleet slot: given back only once the record no longer says Evacuating', () => {
  it('uncordoned mid-evacuation: the record says Restoring before the next node can take the slot', async () => {
    // the budget promise is read from the records: at no moment more nodes Evacuating than slots
    const cluster = new FakeCluster();
    let moving!: () => void;
    const started = new Promise<void>((r) => (moving = r));
    const host = new FakeHost([
      {
        name: 'nova',
        evacuate: ({ signal }) =>
          new Promise((resolve) => {
            moving();
            signal.addEventListener('abort', () => resolve(succeeded('nova')));
          }),
      },
    ]);
    const { budget, atRelease } = phaseAtRelease(cluster);
    const config = configSchema.parse({ fleet: { maxConcurrentEvacuations: 1 } });
    const reconciler = new Reconciler({ cluster, host, config, budget, log: quietLogger() });
    cluster.addNode('node-7', { unschedulable: true });
    const signal = new AbortController().signal;

    const pass = reconciler.reconcile('node-7', signal);
    await started;
    delete cluster.node('node-7').spec.unschedulable;
    reconciler.cancel('node-7', 'node uncordoned');
    await pass;
    await reconciler.reconcile('node-7', signal);

    expect(atRelease).toEqual(['Restoring']);
    expect(cluster.record('node-7')).toBeUndefined();
  });

  it('a slot lost mid-evacuation (another node took it): the record says Queued at once, not Evacuating beside it', async () => {
    const cluster = new FakeCluster();
    const lose = new AbortController();
    const host = new FakeHost([
      {
        name: 'nova',
        evacuate: async ({ signal }) => {
          lose.abort(); // not renewed for a lease duration: node-9 holds the slot now
          await new Promise((r) => setTimeout(r, 0));
          if (signal.aborted) throw signal.reason;
          return succeeded('nova');
        },
      },
    ]);
    const budget: EvacuationBudget = {
      acquire: async () => ({
        name: SLOT,
        lost: lose.signal,
        release: async () => undefined,
        abandon: () => undefined,
      }),
    };
    const config = configSchema.parse({ fleet: { maxConcurrentEvacuations: 1 } });
    const reconciler = new Reconciler({ cluster, host, config, budget, log: quietLogger() });
    cluster.addNode('node-7', { unschedulable: true });

    const result = await reconciler.reconcile('node-7', new AbortController().signal);

    expect(result.requeueAfterMs).toBe(0);
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Queued', resumes: true });
    expect(cluster.record('node-7')?.slot).toBeUndefined();
  });

  it('the pod drain fails on an API error after the VMs left: the record says Queued (to resume) before the slot goes back', async () => {
    const cluster = new FakeCluster();
    const host = new FakeHost([{ name: 'nova', evacuate: async () => succeeded('nova', ['vm-1']) }]);
    const { budget, atRelease } = phaseAtRelease(cluster);
    const config = configSchema.parse({ fleet: { maxConcurrentEvacuations: 1 } });
    const reconciler = new Reconciler({ cluster, host, config, budget, log: quietLogger() });
    cluster.addNode('node-7', { unschedulable: true });
    cluster.drainResult = () => {
      throw new TransientError('kubernetes GET /api/v1/pods: 503', { api: 'kubernetes', status: 503 });
    };
    const signal = new AbortController().signal;

    await expect(reconciler.reconcile('node-7', signal)).rejects.toThrow(/503/);

    // the next node may take the slot now: this one no longer says Evacuating, and resumes in its place
    expect(atRelease).toEqual(['Queued']);
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Queued', resumes: true });
    expect(cluster.record('node-7')?.slot).toBeUndefined();
    expect(cluster.node('node-7').metadata.labels?.[QUEUED_LABEL]).toBeDefined();
    cluster.drainResult = () => ({ succeeded: true, evicted: [], ignored: [], failed: [], total: 0 });
    await reconciler.reconcile('node-7', signal);
    expect(cluster.record('node-7')?.phase).toBe('Evacuated');
    expect(atRelease).toEqual(['Queued', 'Evacuated']);
  });
});
