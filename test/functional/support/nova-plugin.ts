// Drives drainer's Nova plugin in-process (no CLI), for assertions on its structured answers
// (plan, outcome, record) against the real cloud.
import type {
  BackendPlugin,
  EvacuationContext,
  Outcome,
  Plan,
  PluginRecord,
  WorkloadProgress,
} from '../../../src/core/backends/plugin.ts';
import { novaSchema, openstackSchema, type OpenStackConfig } from '../../../src/config/schema.ts';
import { createLogger } from '../../../src/observability/logger.ts';
import { createNovaPlugin, type NovaPluginDeps } from '../../../src/plugins/nova/index.ts';
import type { CloudEnv } from './cloud-env.ts';

export async function novaPlugin(
  cloud: CloudEnv,
  nova: Record<string, unknown> = {},
  hooks: Pick<NovaPluginDeps, 'onApiRequest'> = {},
): Promise<BackendPlugin> {
  return createNovaPlugin({
    nova: novaSchema.parse({ pollInterval: 1, retryBackoff: 1, ...nova }),
    openstack: openStackConfig(cloud),
    log: createLogger({ level: process.env.DRAINER_FT_LOG_LEVEL ?? 'warn' }),
    ...hooks,
  });
}

export function openStackConfig(cloud: CloudEnv): OpenStackConfig {
  return openstackSchema.parse({
    auth: Object.fromEntries(Object.entries(cloud.auth).filter(([, v]) => v !== undefined)),
    ...(cloud.regionName ? { regionName: cloud.regionName } : {}),
    interface: cloud.interface,
  });
}

export interface Evacuation {
  outcome: Outcome;
  /** The last record the plugin saved (what restore gets). */
  record: PluginRecord | undefined;
  progress: (readonly WorkloadProgress[])[];
}

export async function evacuate(
  plugin: BackendPlugin,
  node: string,
  timeoutMs = 900_000,
  /**
   * An uncordon: `cancel` aborts the run; with `abortOnCancel` in-flight migrations are aborted too.
   * `reboot`: the maintenance is declared a reboot (way out stop applies).
   */
  uncordon: { cancel?: AbortSignal; abortOnCancel?: boolean; reboot?: boolean } = {},
): Promise<Evacuation> {
  const progress: (readonly WorkloadProgress[])[] = [];
  let record: PluginRecord | undefined;
  const ctx: EvacuationContext = {
    log: createLogger({ level: process.env.DRAINER_FT_LOG_LEVEL ?? 'warn' }),
    signal: uncordon.cancel
      ? AbortSignal.any([uncordon.cancel, AbortSignal.timeout(timeoutMs)])
      : AbortSignal.timeout(timeoutMs),
    deadline: new Date(Date.now() + timeoutMs),
    trigger: 'functional-test',
    dryRun: false,
    abortOnCancel: uncordon.abortOnCancel ?? false,
    progress: (items) => progress.push(items),
    record: undefined,
    save: async (r) => {
      record = r;
    },
  };
  const outcome = await plugin.evacuate({ name: node, ...(uncordon.reboot ? { reboot: true } : {}) }, ctx);
  return { outcome, record, progress };
}

export async function restore(
  plugin: BackendPlugin,
  node: string,
  record: PluginRecord | undefined,
): Promise<void> {
  await plugin.restore(
    { name: node },
    {
      log: createLogger({ level: process.env.DRAINER_FT_LOG_LEVEL ?? 'warn' }),
      signal: AbortSignal.timeout(300_000),
      dryRun: false,
      record,
      save: async () => {},
    },
  );
}

export async function plan(plugin: BackendPlugin, node: string): Promise<Plan> {
  return plugin.plan({ name: node }, AbortSignal.timeout(120_000));
}
