// drainer's Nova plugin wired to a sandbox OpenStack on loopback, on the sandbox's clock, as the
// agent wires it: evacuate and restore one host (compute-a unless named) with an in-memory Node record.
import { novaSchema, openstackSchema } from '../../../src/config/schema.ts';
import type {
  Outcome,
  Plan,
  PluginRecord,
  ShutdownFallback,
  StrandedChange,
  WorkloadProgress,
} from '../../../src/core/backends/plugin.ts';
import { createLogger, type Logger } from '../../../src/observability/logger.ts';
import { ComputeClient } from '../../../src/plugins/nova/compute.ts';
import { createHttp } from '../../../src/plugins/nova/http.ts';
import { KeystoneSession } from '../../../src/plugins/nova/keystone.ts';
import { NovaPlugin } from '../../../src/plugins/nova/plugin.ts';
import type { Clock } from '../../../src/sandbox/clock.ts';
import { openstackConfigFor } from '../../../src/sandbox/scenario-config.ts';
import type { OpenStackSandbox, ServerSpec } from '../../../src/sandbox/openstack/index.ts';
import { MAINTENANCE_KEY } from '../../../src/plugins/nova/policy.ts';

export interface SandboxDrainer {
  /** `signal`: an uncordon (a CancelledError reason) or a shutdown; `abortOnCancel` as evacuation.abortOnCancel. */
  evacuate(opts?: {
    signal?: AbortSignal;
    abortOnCancel?: boolean;
    progress?: (items: readonly WorkloadProgress[]) => void;
  }): Promise<Outcome>;
  restore(): Promise<void>;
  record(): PluginRecord | undefined;
  /** Starts from this record, as an agent restarted mid-evacuation does. */
  resumeFrom(r: PluginRecord | undefined): void;
  /** The stranded check of the node with no record, the node in service or not. */
  stranded(inService: boolean): Promise<StrandedChange | undefined>;
  plan(): Promise<Plan>;
  /** The agent stops for good mid-evacuation (no successor); `signal` is the stop's time. */
  leftForGood(signal: AbortSignal): Promise<void>;
  /** The fallback at a host shutdown's deadline (what is still on the host), with `marginMs` (simulated) to do it. */
  atShutdown(marginMs?: number): Promise<ShutdownFallback>;
}

/**
 * `nova` is drainer's nova config (pollInterval 2 unless given); `Compute` lets a test put
 * something (an owner's action) right before one of drainer's calls; `log` hears what drainer says.
 */
export function sandboxDrainer(
  cloud: OpenStackSandbox,
  clock: Clock,
  nova: Record<string, unknown> = {},
  Compute: typeof ComputeClient = ComputeClient,
  nodeName = 'compute-a',
  log: Logger = createLogger({ level: 'silent' }),
): SandboxDrainer {
  const openstack = openstackSchema.parse(openstackConfigFor(cloud));
  const http = createHttp({ timeoutMs: 5000, retries: 0 });
  const plugin = new NovaPlugin({
    compute: new Compute({ http, session: new KeystoneSession({ openstack, http }) }),
    nova: novaSchema.parse({ pollInterval: 2, ...nova }),
    log,
    sleep: (ms, signal) => clock.sleep(ms, signal),
    now: () => clock.now(),
  });
  let record: PluginRecord | undefined;
  const node = { name: nodeName, reboot: true };
  // a getter: each call reads the record as last saved
  const context = (signal = new AbortController().signal) => ({
    log,
    signal,
    dryRun: false,
    get record() {
      return record;
    },
    save: async (r: PluginRecord) => {
      record = r;
    },
  });
  return {
    evacuate: (opts = {}) =>
      plugin.evacuate(
        node,
        Object.assign(context(opts.signal), {
          deadline: new Date(clock.now() + 3_600_000),
          trigger: 'cordon' as const,
          abortOnCancel: opts.abortOnCancel ?? false,
          progress: opts.progress ?? (() => {}),
        }),
      ),
    restore: () => plugin.restore(node, context()),
    record: () => record,
    resumeFrom: (r) => {
      record = r;
    },
    stranded: (inService) => plugin.stranded(node, { ...context(), inService }),
    plan: () => plugin.plan(node, new AbortController().signal),
    leftForGood: (signal) => plugin.leftForGood(node, { log, signal, record }),
    atShutdown: (marginMs = 60_000) =>
      plugin.atShutdown(node, { ...context(), trigger: 'shutdown', marginMs }),
  };
}

/** vm-stop on compute-a, whose owner chose the way out `stop` (stopped, not moved, for a declared reboot). */
export const stopServer = (extra: Partial<ServerSpec> = {}): ServerSpec => ({
  id: 'vm-stop',
  name: 'vm-stop',
  projectId: 'demo',
  host: 'compute-a',
  metadata: { [MAINTENANCE_KEY]: 'stop' },
  ramMb: 2048,
  vcpus: 1,
  diskGb: 10,
  ...extra,
});
