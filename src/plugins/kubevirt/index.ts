import type { KubevirtConfig } from '../../config/schema.ts';
import type { BackendPlugin } from '../../core/backends/plugin.ts';
import type { KubeClients } from '../../kube/client.ts';
import type { Logger } from '../../observability/logger.ts';
import { kubevirtApi } from './api.ts';
import { KubevirtPlugin } from './plugin.ts';

export function createKubevirtPlugin(deps: {
  kubevirt: KubevirtConfig;
  kube: KubeClients;
  log: Logger;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The clock of timeouts and durations (default Date.now; the sandbox passes its scaled one). */
  now?: () => number;
}): BackendPlugin {
  return new KubevirtPlugin({
    config: deps.kubevirt,
    api: kubevirtApi(deps.kube),
    log: deps.log.child({ plugin: 'kubevirt' }),
    ...(deps.sleep ? { sleep: deps.sleep } : {}),
    ...(deps.now ? { now: deps.now } : {}),
  });
}
