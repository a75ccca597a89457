// Arrange/act helpers for the KubeVirt plugin stories: the sandbox's API server with its kubelet and
// KubeVirt simulation on a fast clock, the plugin built as the registry builds it, and a context.
import { afterEach } from 'vitest';
import { kubevirtSchema, type KubevirtConfig } from '../../../src/config/schema.ts';
import type {
  EvacuationContext,
  Outcome,
  PluginRecord,
  WorkloadProgress,
} from '../../../src/core/backends/plugin.ts';
import { createKubeClients, type KubeClients } from '../../../src/kube/client.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { createKubevirtPlugin } from '../../../src/plugins/kubevirt/index.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import type { KubeObject } from '../../../src/sandbox/kube/types.ts';
import type { ScenarioInput } from '../../../src/sandbox/scenario.ts';

export const VMI = 'virtualmachineinstances.kubevirt.io';
export const VMIM = 'virtualmachineinstancemigrations.kubevirt.io';
export const NS = 'vms';

type VmiSpec = NonNullable<NonNullable<ScenarioInput['kubevirt']>['vmis']>[number];
type KubevirtScenario = Partial<NonNullable<ScenarioInput['kubevirt']>>;

/** A VMI on node-1 (migratable, LiveMigrate unless told otherwise). */
export const vm = (name: string, more: Partial<VmiSpec> = {}): VmiSpec => ({
  name,
  namespace: NS,
  node: 'node-1',
  evictionStrategy: 'LiveMigrate',
  ...more,
});

export interface World {
  readonly sb: Sandbox;
  readonly k: KubeClients;
  plugin(config?: Partial<KubevirtConfig>): ReturnType<typeof createKubevirtPlugin>;
  close(): Promise<void>;
}

/** Three nodes, KubeVirt (unless `kubevirt.installed: false`), the kubelet; 50× clock. */
export async function world(kubevirt: KubevirtScenario, scale = 50): Promise<World> {
  const sb = await startSandbox({
    scenario: {
      nodes: [{ name: 'node-1' }, { name: 'node-2' }, { name: 'node-3' }],
      // fast retries: KubeVirt's backoff after a failed migration, in simulated seconds
      timings: { migrationBackoffSeconds: 4 },
      kubevirt: { installed: true, migrationSeconds: 4, ...kubevirt },
    },
    scale,
    controllers: { replicaset: false, disruption: false, nodeLifecycle: false },
  });
  const k = createKubeClients({ kubeconfigYaml: sb.kube.kubeconfig() });
  return {
    sb,
    k,
    plugin: (config = {}) =>
      createKubevirtPlugin({
        kubevirt: kubevirtSchema.parse({ pollInterval: 0.5, ...config }),
        kube: k,
        log: silentLogger(),
        now: () => sb.clock.now(),
        sleep: (ms, signal) => sb.clock.sleep(ms, signal),
      }),
    close: () => sb.close(),
  };
}

/** `world`, for a test file: each world it opens is closed after its test. */
export function worldPerTest(): typeof world {
  const open: World[] = [];
  afterEach(async () => {
    for (const w of open.splice(0)) await w.close();
  });
  return async (kubevirt, scale) => {
    const w = await world(kubevirt, scale);
    open.push(w);
    return w;
  };
}

export interface Ctx extends EvacuationContext {
  /** The record as last saved. */
  saved(): PluginRecord | undefined;
  /** Every progress report. */
  readonly reports: (readonly WorkloadProgress[])[];
}

export function context(
  opts: { record?: PluginRecord; signal?: AbortSignal; abortOnCancel?: boolean; dryRun?: boolean } = {},
): Ctx {
  let record = opts.record;
  const reports: (readonly WorkloadProgress[])[] = [];
  return {
    log: silentLogger(),
    signal: opts.signal ?? new AbortController().signal,
    deadline: new Date(Date.now() + 60_000),
    trigger: 'cordon',
    dryRun: opts.dryRun ?? false,
    abortOnCancel: opts.abortOnCancel ?? false,
    record,
    progress: (items) => void reports.push(items),
    save: async (r) => {
      record = structuredClone(r);
    },
    saved: () => record,
    reports,
  };
}

/** The record a first evacuation left, for restore. */
export const restoreCtx = (ctx: Ctx) => ({
  log: silentLogger(),
  signal: new AbortController().signal,
  dryRun: false,
  record: ctx.saved(),
  save: async (r: PluginRecord) => {
    await ctx.save(r);
  },
});

export const vmi = (w: World, name: string): KubeObject => w.sb.kube.store.get(VMI, NS, name);
export const nodeOf = (w: World, name: string): string | undefined =>
  (vmi(w, name).status as { nodeName?: string } | undefined)?.nodeName;
export const phaseOf = (w: World, name: string): string | undefined =>
  (vmi(w, name).status as { phase?: string } | undefined)?.phase;
export const migrationsOf = (w: World, name: string): KubeObject[] =>
  w.sb.kube.store
    .list(VMIM, { namespace: NS })
    .filter((m) => (m.spec as { vmiName?: string }).vmiName === name);
export const taints = (w: World, node = 'node-1'): { key: string; value?: string; effect: string }[] =>
  (w.sb.kube.store.get('nodes', undefined, node).spec as { taints?: [] } | undefined)?.taints ?? [];

/** Adds a taint as someone else would (not through drainer). */
export function addForeignTaint(w: World, key: string, node = 'node-1'): void {
  const n = w.sb.kube.store.get('nodes', undefined, node);
  const spec = (n.spec ?? {}) as { taints?: unknown[] };
  n.spec = { ...spec, taints: [...(spec.taints ?? []), { key, value: 'theirs', effect: 'NoSchedule' }] };
  w.sb.kube.store.update('nodes', n);
}

export const launcherOf = (w: World, name: string, node = 'node-1'): KubeObject | undefined =>
  w.sb.kube.store
    .list('pods', { namespace: NS, labelSelector: `vm.kubevirt.io/name=${name}` })
    .find((p) => (p.spec as { nodeName?: string }).nodeName === node && !p.metadata.deletionTimestamp);

/** Someone else's migration of a VMI (an operator's own tool). */
export const moveByHand = (w: World, name: string) =>
  w.sb.kube.store.create(VMIM, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceMigration',
    metadata: { name: `by-hand-${name}`, namespace: NS },
    spec: { vmiName: name },
  });

/** POST requests the plugin (or anyone) made to the eviction subresource. */
export const evictionPosts = (w: World): string[] =>
  w.sb.kube.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('/eviction')).map((r) => r.path);

export const byName = (o: Outcome) => Object.fromEntries(o.workloads.map((x) => [x.name, x]));

/** Polls until check answers truthy (real time). */
export async function until<T>(what: string, check: () => T, ms = 8000): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
