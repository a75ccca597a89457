// What an agent watches of the fleet tools that drain its node (issue 50): Cluster API's pre-drain
// hook on the node's Machine, and their drain timeouts compared when a maintenance starts.
import { EventRecorder } from '../../kube/events.ts';
import type { Logger } from '../../observability/logger.ts';
import type { AgentOptions } from '../agent/agent.ts';
import type { BackendPlugin } from '../backends/plugin.ts';
import type { KubeClients } from '../../kube/client.ts';
import type { Config } from '../../config/schema.ts';
import { PluginHost } from '../backends/host.ts';
import { PreDrainHook } from './hook.ts';
import { kubeMachinePort } from './kube-port.ts';
import { TimeoutWarner } from './timeout-warner.ts';
import { timeoutWarnings } from './tool-timeouts.ts';

/** What of the node agent's options the fleet tools read (its own shape: node-agent.ts imports this file). */
export interface FleetToolOptions {
  readonly nodeName: string;
  readonly config: Config;
  readonly k: KubeClients;
  readonly plugins: readonly BackendPlugin[];
  readonly signal: AbortSignal;
  readonly watch?: { readonly timeoutSeconds?: number; readonly recheckMs?: number };
}

/** What the agent watches of the fleet tools: Cluster API's hook, and their timeouts at a maintenance's start. */
export function fleetTools(o: FleetToolOptions, log: Logger): NonNullable<AgentOptions['hook']> {
  const hook = preDrainHook(o, log);
  const events = new EventRecorder({ k: o.k, log, host: o.nodeName });
  const warner = new TimeoutWarner({
    nodeName: o.nodeName,
    config: o.config,
    log,
    signal: o.signal,
    plans: (signal) =>
      new PluginHost({ plugins: o.plugins, log }).plan({ name: o.nodeName }, signal, { capacity: false }),
    // the Node's labels and its Machine from the agent's own watches: no reads at a maintenance start
    warnings: (plans, node) =>
      timeoutWarnings(o.k, o.nodeName, plans, o.config, {
        labels: node.metadata?.labels ?? {},
        machine: hook.machine(),
      }),
    warn: (message) =>
      events.record(
        { apiVersion: 'v1', kind: 'Node', name: o.nodeName },
        'Warning',
        'DrainTimeoutShort',
        message,
      ),
  });
  return {
    watch: (signal, held) => hook.watch(signal, held),
    onNode: (node) => {
      hook.onNode(node);
      warner.onNode(node);
    },
  };
}

/**
 * Cluster API's pre-drain hook on the node's Machine. Watched with the hook off too: an agent turned
 * off takes its hook away, or deleted Machines would wait on it for good.
 */
function preDrainHook(o: FleetToolOptions, log: Logger): PreDrainHook {
  return new PreDrainHook({
    nodeName: o.nodeName,
    enabled: o.config.clusterAPI.preDrainHook,
    port: kubeMachinePort({
      k: o.k,
      events: new EventRecorder({ k: o.k, log, host: o.nodeName }),
      log,
      ...(o.watch?.timeoutSeconds ? { timeoutSeconds: o.watch.timeoutSeconds } : {}),
      ...(o.watch?.recheckMs ? { recheckMs: o.watch.recheckMs } : {}),
    }),
    log,
  });
}
