// A model-based test of the drain gate and the record (issue 40): fast-check generates random
// interleavings of what moves them (cordons and uncordons, evacuations that finish or leave a VM,
// an operator's release given now or landing late for an earlier maintenance, a release written by
// an older version, forced restores, start --now, gate pod and PDB deletions, a release that
// reaches the API server late, the DaemonSet re-created, agent restarts), runs each on the real
// Reconciler and DrainGate over the in-memory cluster and gate, and after every step checks the
// gate's promises against a small reference model:
//  - while a VM is on the host and no release was given for THIS maintenance, the gate guards the
//    node (its pod with the finalizer): at the moment the plugin starts moving VMs, at the moment
//    nova-compute is enabled again, and once each step has settled;
//  - an operator's annotation (release, start-now) never outlives its maintenance.
// A failure prints the shrunk sequence of steps.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import { START_NOW_ANNOTATION } from '../../src/core/fleet/start-now.ts';
import { DrainGate } from '../../src/core/gate/gate.ts';
import { gateKeeper } from '../../src/core/gate/keeper.ts';
import { releaseValue } from '../../src/core/gate/step.ts';
import { recordId, STATE_ANNOTATION } from '../../src/core/record/record.ts';
import type { KubeClients } from '../../src/kube/client.ts';
import { GATE_RELEASED_ANNOTATION, gateName } from '../../src/kube/gate.ts';
import { failedOne, FakeCluster, FakeHost, quietLogger, succeeded } from './fakes.ts';
import { FakeGateApi } from './fake-gate.ts';

const NODE = 'hv-1';
const log = quietLogger();
const config = configSchema.parse({ drainGate: { holdTimeout: 2 }, resyncInterval: 60 });

/** The reference model: what is on the host, and which maintenance an operator released. */
interface Model {
  vms: number;
  /** The record id an operator's release was given for (the release CLI accepted it). */
  releasedFor?: string | undefined;
  /** Ids of the maintenances seen so far (a late release names one of them). */
  seen: string[];
}

/** The system under test: one node, its agent (reconciler and gate) over in-memory objects. */
class World {
  readonly cluster = new FakeCluster();
  readonly api = new FakeGateApi();
  gate!: DrainGate;
  reconciler!: Reconciler;
  /** The next evacuation leaves one VM behind (a migration that fails). */
  stuck = false;
  /** VMs the scheduler puts back once nova-compute is enabled again. */
  returning = 0;
  /** A promise broken inside a step (at the moment it happened). */
  broken: string[] = [];
  readonly model: Model = { vms: 3, seen: [] };

  constructor() {
    this.cluster.addNode(NODE);
    this.startAgent();
  }

  startAgent(): void {
    this.gate = new DrainGate({
      api: this.api,
      log,
      podOf: (n) => ({ namespace: 'drainer', name: gateName(n) }),
      retry: { initialMs: 2, maxMs: 5 },
    });
    const host = new FakeHost([
      {
        name: 'nova',
        evacuate: async () => {
          await settle();
          this.expectGuarded('when the plugin starts moving VMs');
          if (this.stuck) {
            this.model.vms = 1;
            return failedOne('nova', 'no valid host');
          }
          this.model.vms = 0;
          return succeeded('nova', ['vm-1']);
        },
        restore: async () => {
          // nova-compute enabled: the scheduler may place VMs here from now on
          this.model.vms += this.returning;
          await settle();
          this.expectGuarded('once nova-compute is enabled again');
        },
      },
    ]);
    this.reconciler = new Reconciler({ cluster: this.cluster, host, config, log, gate: this.gate });
  }

  record() {
    return this.cluster.record(NODE);
  }

  annotation(key: string): string | undefined {
    return this.cluster.node(NODE).metadata.annotations?.[key];
  }

  setAnnotation(key: string, value: string | undefined): void {
    const n = this.cluster.node(NODE);
    n.metadata.annotations ??= {};
    if (value === undefined) delete n.metadata.annotations[key];
    else n.metadata.annotations[key] = value;
    n.metadata.resourceVersion = `${Number(n.metadata.resourceVersion ?? 0) + 1000}`;
  }

  /** A release is valid for the maintenance under way, and only until its restore begins. */
  validRelease(): boolean {
    const rec = this.record();
    return !!rec && rec.phase !== 'Restoring' && this.model.releasedFor === recordId(rec);
  }

  expectGuarded(when: string): void {
    if (this.model.vms > 0 && !this.validRelease() && !this.api.guards(NODE))
      this.broken.push(
        `${this.model.vms} VM(s) on the host and no release for this maintenance, but the gate does not guard ${when}`,
      );
  }

  async pass(): Promise<void> {
    await this.reconciler.reconcile(NODE, new AbortController().signal).catch(() => undefined);
    const rec = this.record();
    if (rec && !this.model.seen.includes(recordId(rec))) this.model.seen.push(recordId(rec));
    await settle(this.api.slowReleaseMs);
  }

  /** The promises that hold once a step has settled. */
  check(): void {
    this.expectGuarded('after the step');
    const rec = this.record();
    if (!rec && this.annotation(GATE_RELEASED_ANNOTATION) !== undefined)
      this.broken.push('a release outlived its maintenance');
    if (
      !rec &&
      !this.cluster.node(NODE).spec.unschedulable &&
      this.annotation(START_NOW_ANNOTATION) !== undefined
    )
      this.broken.push('a start-now survived the uncordon');
    expect(this.broken).toEqual([]);
  }
}

/** Lets the gate's looks (and a release that reaches the API server late) land. */
async function settle(ms = 0): Promise<void> {
  if (ms) await new Promise((r) => setTimeout(r, ms + 2));
  for (let i = 0; i < 12; i++) await new Promise((r) => setImmediate(r));
}

type Cmd = fc.AsyncCommand<Model, World>;

/** A step: what it does to the world, then the agent's pass, then the check. */
function step(name: string, act: (w: World) => Promise<void> | void, pass = true): Cmd {
  return {
    check: () => true,
    async run(_m, w) {
      await act(w);
      if (pass) await w.pass();
      else await settle(w.api.slowReleaseMs);
      w.check();
    },
    toString: () => name,
  };
}

const cordon = (stuck: boolean) =>
  step(`cordon (${stuck ? 'a VM will not move' : 'every VM moves'})`, (w) => {
    w.stuck = stuck;
    w.cluster.node(NODE).spec.unschedulable = true;
  });

const uncordon = (returning: number) =>
  step(`uncordon (${returning} VM(s) come back)`, (w) => {
    w.returning = returning;
    w.cluster.node(NODE).spec.unschedulable = false;
  });

/** `drainer release --force`: recorded for this record, then its own gate lets the pod go. */
const release = step('drainer release --force', async (w) => {
  const rec = w.record();
  if (!rec || rec.phase === 'Restoring') return;
  w.setAnnotation(GATE_RELEASED_ANNOTATION, releaseValue(rec, new Date()));
  w.model.releasedFor = recordId(rec);
  await w.api.release(NODE);
});

/** A release given for an earlier maintenance lands now (it was in flight during its restore). */
const lateRelease = (which: number) =>
  step(`a release for maintenance #${which} lands late`, (w) => {
    const id = w.model.seen[which % Math.max(1, w.model.seen.length)];
    if (id === undefined) return;
    w.setAnnotation(GATE_RELEASED_ANNOTATION, JSON.stringify({ at: new Date().toISOString(), record: id }));
    if (w.record() && recordId(w.record()!) === id && w.record()?.phase !== 'Restoring')
      w.model.releasedFor = id;
  });

const olderRelease = step('a release written by an older drainer, weeks ago', (w) =>
  w.setAnnotation(GATE_RELEASED_ANNOTATION, '2020-01-01T00:00:00.000Z'),
);

const forceRestore = step('drainer restore --force (the record unreadable)', async (w) => {
  if (w.record()) w.setAnnotation(STATE_ANNOTATION, '{not json');
  w.returning = 0;
  await w.reconciler.restoreNow(NODE, new AbortController().signal, true).catch(() => undefined);
  w.setAnnotation('drainer.dev/state-unreadable', undefined);
});

const startNow = step('drainer start --now', (w) => {
  const rec = w.record();
  w.cluster.node(NODE).spec.unschedulable = true;
  w.setAnnotation(
    START_NOW_ANNOTATION,
    JSON.stringify({ by: 'ops', at: new Date().toISOString(), ...(rec ? { record: recordId(rec) } : {}) }),
  );
});

/** `kubectl delete pod` or `pdb` of the gate (a drain, an operator): the agent's watch sees it. */
const deleteGate = (what: 'pod' | 'pdb') =>
  step(
    `kubectl delete ${what} (the gate's)`,
    (w) => {
      if (what === 'pod') w.api.deletePod(NODE);
      else w.api.deletePdb(NODE);
      w.gate.heal(NODE);
    },
    false,
  );

const slowApi = (ms: number) =>
  step(
    `the API server answers releases ${ms} ms late`,
    (w) => {
      w.api.slowReleaseMs = ms;
    },
    false,
  );

const restartAgent = step('the agent restarts', (w) => {
  w.gate.stop();
  w.startAgent();
});

/** `kubectl delete ds --cascade=orphan` then apply: the agent stops, sees a successor, keeps the gate. */
const recreateDaemonSet = step('the DaemonSet is re-created (--cascade=orphan, apply)', async (w) => {
  const answers = [true, false];
  const keeper = gateKeeper({
    k: {} as KubeClients,
    namespace: 'drainer',
    nodeName: NODE,
    gate: w.gate,
    uninstalled: async () => answers.shift() ?? false,
    log,
    successorWaitMs: 1,
  });
  await keeper.atStop();
  w.startAgent();
});

const commands = [
  fc.boolean().map(cordon),
  fc.integer({ min: 0, max: 2 }).map(uncordon),
  fc.constant(release),
  fc.nat(4).map(lateRelease),
  fc.constant(olderRelease),
  fc.constant(forceRestore),
  fc.constant(startNow),
  fc.constantFrom<'pod' | 'pdb'>('pod', 'pdb').map(deleteGate),
  fc.constantFrom(0, 3).map(slowApi),
  fc.constant(restartAgent),
  fc.constant(recreateDaemonSet),
];

describe('the drain gate and the record, model-based', () => {
  it('keep their promises in every interleaving of operators, drains and agents', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 14 }), async (cmds) => {
        const w = new World();
        // the agent's first pass at start: the node is in service, its gate held
        await w.pass();
        try {
          await fc.asyncModelRun(() => ({ model: w.model, real: w }), cmds);
        } finally {
          w.gate.stop();
        }
      }),
      { numRuns: Number(process.env.GATE_MODEL_RUNS ?? 300) },
    );
  }, 120_000);
});
