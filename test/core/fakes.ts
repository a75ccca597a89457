// Test doubles for the core: an in-memory Cluster (the port the reconciler talks to) and a
// scripted plugin host. Kubernetes behaviour itself is tested against the sandbox API server.
import { Writable } from 'node:stream';
import type {
  Cluster,
  DrainOutcome,
  EventReason,
  NodeChange,
  PodId,
  UncordonResult,
} from '../../src/core/cluster/cluster.ts';
import { ConflictError } from '../../src/errors.ts';
import type {
  MaintenanceObject,
  MaintenanceStatus,
  NodeObject,
  ObjectRef,
  Taint,
} from '../../src/core/cluster/objects.ts';
import { PluginHost } from '../../src/core/backends/host.ts';
import { parseRecord, STATE_ANNOTATION, type NodeRecord } from '../../src/core/record/record.ts';
import type { EvacuationHost } from '../../src/core/agent/run-context.ts';
import type {
  BackendPlugin,
  NodeRef,
  Outcome,
  Plan,
  PluginRecord,
  StrandedChange,
  StrandedOptions,
  WorkloadProgress,
} from '../../src/core/backends/plugin.ts';
import { createLogger, type Logger } from '../../src/observability/logger.ts';
import type { WatchCallbacks, WatchSources } from '../../src/core/agent/agent.ts';

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends object ? Mutable<T[K]> : T[K] };
export type JsonNode = Mutable<NodeObject> & {
  metadata: {
    name: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    resourceVersion?: string;
    managedFields?: { manager: string; operation: string; subresource?: string; time: string }[];
  };
  spec: { unschedulable?: boolean; taints?: Taint[] };
  /** What the kubelet reports (the core never reads it). */
  status?: { conditions: { type: string; status: string; lastHeartbeatTime: string }[] };
};
export type JsonNm = {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string;
    deletionTimestamp?: string;
    annotations?: Record<string, string>;
    finalizers?: string[];
  };
  spec: { nodeName: string; reason?: string };
  status?: MaintenanceStatus;
};

export interface RecordedEvent {
  ref: ObjectRef;
  type: string;
  reason: EventReason;
  message: string;
}

const clone = <T>(x: T): T => structuredClone(x);

export class FakeCluster implements Cluster {
  readonly nodes = new Map<string, JsonNode>();
  nms: JsonNm[] = [];
  readonly events: RecordedEvent[] = [];
  /** Every write, in order, for "nothing was written" and "record first" assertions. */
  readonly writes: string[] = [];
  drainCalls = 0;
  /** NodeMaintenance lists (one per group on a real cluster, each cluster-wide). */
  lists = 0;
  drainResult: (node: string, skip?: (p: PodId) => string | undefined) => DrainOutcome = () => ({
    succeeded: true,
    evicted: [{ namespace: 'default', name: 'web-1' }],
    ignored: [],
    failed: [],
    total: 1,
  });
  #rv = 1;
  /** The resourceVersion of each node's last uncordon. */
  readonly #lifted = new Map<string, number>();
  /** Watch listeners (FakeSources): told about every change, like a watch stream. */
  readonly listeners = new Set<
    (kind: 'node' | 'nm', type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: unknown) => void
  >();

  addNode(name: string, opts: { unschedulable?: boolean } = {}): JsonNode {
    const node: JsonNode = {
      metadata: { name, annotations: {}, resourceVersion: String(this.#rv++) },
      spec: { ...(opts.unschedulable ? { unschedulable: true } : {}) },
    };
    this.nodes.set(name, node);
    return node;
  }

  node(name: string): JsonNode {
    const n = this.nodes.get(name);
    if (!n) throw new Error(`no node ${name}`);
    return n;
  }

  record(name: string) {
    return parseRecord(this.node(name).metadata.annotations?.[STATE_ANNOTATION]);
  }

  addMaintenance(
    name: string,
    nodeName: string,
    createdAt = '2024-01-01T00:00:00Z',
    group = 'nodemaintenance.medik8s.io',
  ): JsonNm {
    const nm: JsonNm = {
      apiVersion: `${group}/v1beta1`,
      kind: 'NodeMaintenance',
      metadata: {
        name,
        uid: `uid-${name}`,
        resourceVersion: String(this.#rv++),
        creationTimestamp: createdAt,
      },
      spec: { nodeName },
    };
    this.nms.push(nm);
    this.changed(nm);
    return nm;
  }

  nm(name: string): JsonNm {
    const nm = this.nms.find((n) => n.metadata.name === name);
    if (!nm) throw new Error(`no NodeMaintenance ${name}`);
    return nm;
  }

  /** kubectl delete: with finalizers the object only gets a deletionTimestamp. */
  deleteMaintenance(name: string): void {
    const nm = this.nm(name);
    if (nm.metadata.finalizers?.length) nm.metadata.deletionTimestamp = new Date().toISOString();
    else this.nms = this.nms.filter((n) => n !== nm);
    this.changed(nm);
  }

  /** The kubelet's status report (nodeStatusReportFrequency): its status, resourceVersion and managedFields change. */
  kubeletReport(name: string): void {
    const n = this.node(name);
    const time = new Date().toISOString();
    n.status = { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: time }] };
    n.metadata.managedFields = [{ manager: 'kubelet', operation: 'Update', subresource: 'status', time }];
    this.#bump(n);
  }

  async getNode(name: string) {
    const n = this.nodes.get(name);
    return n ? clone(n) : undefined;
  }

  async listMaintenances() {
    this.lists++;
    return clone(this.nms) as MaintenanceObject[];
  }

  async setNodeAnnotation(
    node: string,
    key: string,
    value: string | null,
    labels: Record<string, string | null> = {},
    change: NodeChange = {},
    guard?: { resourceVersion: string },
  ): Promise<string | undefined> {
    const n = this.node(node);
    if (guard && guard.resourceVersion !== n.metadata.resourceVersion)
      throw new ConflictError('the object has been modified', { api: 'kubernetes', status: 409 });
    this.writes.push(`annotation ${key}`);
    // the change rides on the record's write (one bump): listed after it, as it was recorded first
    if (change.cordon) {
      this.writes.push('unschedulable true');
      n.spec.unschedulable = true;
    }
    if (change.taint) {
      const taint = change.taint;
      this.writes.push(`taint+ ${taint.key}`);
      n.spec.taints = [...(n.spec.taints ?? []).filter((t) => t.key !== taint.key), { ...taint }];
    }
    n.metadata.annotations ??= {};
    if (value === null) delete n.metadata.annotations[key];
    else n.metadata.annotations[key] = value;
    for (const [k, v] of Object.entries(labels)) {
      n.metadata.labels ??= {};
      if (v === null) delete n.metadata.labels[k];
      else n.metadata.labels[k] = v;
    }
    this.#bump(n);
    return n.metadata.resourceVersion;
  }

  async setUnschedulable(node: string, unschedulable: boolean) {
    this.writes.push(`unschedulable ${unschedulable}`);
    const n = this.node(node);
    if (unschedulable) n.spec.unschedulable = true;
    else delete n.spec.unschedulable;
    this.#bump(n);
    if (!unschedulable) this.#lifted.set(node, Number(n.metadata.resourceVersion));
  }

  /** As the API server's watch history tells it: a cordon lifted after `since` is someone else's. */
  async uncordon(node: string, since: string | undefined): Promise<UncordonResult> {
    const n = this.nodes.get(node);
    if (n?.spec.unschedulable !== true) return { done: 'not-cordoned' };
    if (since !== undefined && (this.#lifted.get(node) ?? 0) > Number(since))
      return { done: 'kept', why: 'uncordoned and cordoned again by someone else during the restore' };
    await this.setUnschedulable(node, false);
    return { done: 'uncordoned' };
  }

  async addTaint(node: string, taint: Taint) {
    this.writes.push(`taint+ ${taint.key}`);
    const n = this.node(node);
    n.spec.taints = [...(n.spec.taints ?? []).filter((t) => t.key !== taint.key), { ...taint }];
    this.#bump(n);
  }

  async removeTaint(node: string, key: string, effect: string) {
    this.writes.push(`taint- ${key}`);
    const n = this.node(node);
    n.spec.taints = (n.spec.taints ?? []).filter((t) => !(t.key === key && t.effect === effect));
    this.#bump(n);
  }

  async patchMaintenanceStatus(
    nm: MaintenanceObject,
    status: MaintenanceStatus,
    guard?: { resourceVersion: string },
  ) {
    const cur = this.nm(nm.metadata?.name ?? '');
    if (guard && guard.resourceVersion !== cur.metadata.resourceVersion) {
      throw new ConflictError('the object has been modified', { api: 'kubernetes', status: 409 });
    }
    this.writes.push(`nm-status ${cur.metadata.name} ${status.phase}`);
    cur.status = { ...cur.status, ...clone(status) };
    this.#bump(cur);
  }

  async addMaintenanceFinalizer(
    nm: MaintenanceObject,
    finalizer: string,
    annotations: Record<string, string>,
  ) {
    const cur = this.nm(nm.metadata?.name ?? '');
    this.writes.push(`nm-finalizer+ ${cur.metadata.name}`);
    cur.metadata.finalizers = [...new Set([...(cur.metadata.finalizers ?? []), finalizer])];
    cur.metadata.annotations = { ...cur.metadata.annotations, ...annotations };
    this.#bump(cur);
  }

  async removeMaintenanceFinalizer(nm: MaintenanceObject, finalizer: string) {
    const cur = this.nm(nm.metadata?.name ?? '');
    this.writes.push(`nm-finalizer- ${cur.metadata.name}`);
    cur.metadata.finalizers = (cur.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    const gone = cur.metadata.deletionTimestamp && cur.metadata.finalizers.length === 0;
    if (gone) this.nms = this.nms.filter((n) => n !== cur);
    this.#bump(cur);
  }

  async event(ref: ObjectRef, type: 'Normal' | 'Warning', reason: EventReason, message: string) {
    this.events.push({ ref, type, reason, message });
  }

  async drain(opts: { node: string; skipPod?: (p: PodId) => string | undefined }) {
    this.writes.push('drain');
    this.drainCalls++;
    return this.drainResult(opts.node, opts.skipPod);
  }

  reasons(kind = 'Node'): string[] {
    return this.events.filter((e) => e.ref.kind === kind).map((e) => e.reason);
  }

  #bump(o: { metadata: { resourceVersion?: string; name?: string } }) {
    o.metadata.resourceVersion = String(this.#rv++);
    this.changed(o);
  }

  /** Tells the watchers about an object the test or the cluster changed. */
  changed(o: { metadata: { name?: string }; spec?: object }): void {
    const kind = o.spec && 'nodeName' in o.spec ? 'nm' : 'node';
    const present =
      kind === 'nm' ? this.nms.includes(o as JsonNm) : this.nodes.get(o.metadata.name ?? '') === o;
    for (const l of this.listeners) l(kind, present ? 'MODIFIED' : 'DELETED', clone(o));
  }
}

/** A plugin scripted per test: what it does on evacuate and restore. */
export interface FakePlugin {
  name: string;
  plan?: () => Plan;
  evacuate: (ctx: {
    signal: AbortSignal;
    record: PluginRecord | undefined;
    save: (r: PluginRecord) => Promise<void>;
    progress: (items: readonly WorkloadProgress[]) => void;
    trigger: string;
  }) => Promise<Outcome>;
  restore?: (ctx: {
    record: PluginRecord | undefined;
    save: (r: PluginRecord) => Promise<void>;
  }) => Promise<void>;
  /** A change of drainer's found with no record (the node in service or not). */
  stranded?: (inService: boolean) => Promise<StrandedChange | undefined>;
}

/** The real plugin host over scripted plugins, counting calls. */
export class FakeHost implements EvacuationHost {
  readonly #host: PluginHost;
  evacuateCalls = 0;
  restoreCalls = 0;
  constructor(plugins: FakePlugin[]) {
    this.#host = new PluginHost({
      plugins: plugins.map(toBackend),
      log: quietLogger(),
      abandonAfterMs: 1000,
    });
  }
  plan(node: NodeRef, signal: AbortSignal): Promise<Plan[]> {
    return this.#host.plan(node, signal);
  }
  evacuate(node: NodeRef, opts: Parameters<EvacuationHost['evacuate']>[1]): Promise<Outcome[]> {
    this.evacuateCalls++;
    return this.#host.evacuate(node, opts);
  }
  restore(node: NodeRef, opts: Parameters<EvacuationHost['restore']>[1]) {
    this.restoreCalls++;
    return this.#host.restore(node, opts);
  }
  stranded(node: NodeRef, opts: StrandedOptions) {
    return this.#host.stranded(node, opts);
  }
}

function toBackend(p: FakePlugin): BackendPlugin {
  return {
    name: p.name,
    plan: async () => p.plan?.() ?? { plugin: p.name, workloads: [] },
    evacuate: (_node, ctx) =>
      p.evacuate({
        signal: ctx.signal,
        record: ctx.record,
        save: (r) => ctx.save(r),
        progress: (items) => ctx.progress(items),
        trigger: ctx.trigger,
      }),
    restore: async (_node, ctx) => p.restore?.({ record: ctx.record, save: (r) => ctx.save(r) }),
    ...(p.stranded ? { stranded: (_node: NodeRef, o: StrandedOptions) => p.stranded!(o.inService) } : {}),
  };
}

export const succeeded = (plugin: string, moved: string[] = []): Outcome => ({
  plugin,
  succeeded: true,
  workloads: moved.map((id) => ({ id, name: id, state: 'succeeded', action: 'live-migrate', attempts: 1 })),
});

/** An Outcome of a plugin whose one server did not move, for `message`. */
export const failedOne = (plugin: string, message: string, attempts = 1): Outcome => ({
  plugin,
  succeeded: false,
  workloads: [{ id: 'a', name: 'db-1', state: 'failed', action: 'live-migrate', attempts, message }],
});

/** A logger whose lines the test can read. */
export function captureLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { log: createLogger({ level: 'debug', destination }), lines };
}

export const quietLogger = (): Logger => createLogger({ level: 'silent' });

/** Watches over the FakeCluster: list on start, then every change. */
export class FakeSources implements WatchSources {
  readonly #cluster: FakeCluster;
  readonly #node: string;
  constructor(cluster: FakeCluster, node: string) {
    this.#cluster = cluster;
    this.#node = node;
  }
  watchNode(cb: WatchCallbacks<NodeObject>): Promise<void> {
    return this.#watch(cb, 'node', () =>
      [this.#cluster.nodes.get(this.#node)].filter((n) => n !== undefined),
    );
  }
  watchMaintenances(cb: WatchCallbacks<MaintenanceObject>): Promise<void> {
    return this.#watch(cb, 'nm', () => this.#cluster.nms);
  }
  #watch<T>(cb: WatchCallbacks<T>, kind: 'node' | 'nm', list: () => object[]): Promise<void> {
    return new Promise((resolve) => {
      const listener = (k: 'node' | 'nm', type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: unknown) => {
        if (k !== kind) return;
        if (kind === 'node' && (obj as JsonNode).metadata.name !== this.#node) return;
        cb.onEvent(type, obj as T);
      };
      this.#cluster.listeners.add(listener);
      for (const o of list()) cb.onEvent('ADDED', clone(o) as T);
      cb.onSynced();
      cb.signal.addEventListener('abort', () => {
        this.#cluster.listeners.delete(listener);
        resolve();
      });
    });
  }
}

/** What a Failed evacuation leaves: our taint, nova-compute disabled by us, one of two servers moved. */
export function failedAfterChanges(): NodeRecord {
  return {
    phase: 'Failed',
    trigger: 'cordon',
    since: new Date().toISOString(),
    cordonedByUs: false,
    taintedByUs: true,
    failureReason: 'EvacuationFailed',
    lastError: 'nova: not every workload moved (db-7: no valid host)',
    plugins: {
      nova: {
        host: 'compute-7',
        serviceId: 'svc-7',
        disabledByUs: true,
        reason: 'drainer: cordon',
        migrations: {},
      },
    },
    outcomes: [{ plugin: 'nova', succeeded: false, moved: 1, failed: 1 }],
  };
}
