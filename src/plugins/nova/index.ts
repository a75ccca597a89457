// The Nova backend's composition: one HTTP layer, one Keystone session, one compute client.
import type { BackendPlugin } from '../../core/backends/plugin.ts';
import type { NovaConfig, OpenStackConfig } from '../../config/schema.ts';
import type { Logger } from '../../observability/logger.ts';
import { ComputeClient } from './compute.ts';
import { createHttp, defaultSleep, type ApiRequestHook, type Sleep } from './http.ts';
import { KeystoneSession } from './keystone.ts';
import { PlacementClient } from './placement.ts';
import { NovaPlugin } from './plugin.ts';

export interface NovaPluginDeps {
  nova: NovaConfig;
  openstack: OpenStackConfig;
  log: Logger;
  onApiRequest?: ApiRequestHook;
  /** A request with no answer for 5 s: what it waits for (the CLI prints it). */
  onSlow?: (text: string) => void;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Wall clock in epoch ms (tests). */
  now?: () => number;
  /** HTTP retries of connection errors and 502/503/504 (default 3) and their first backoff (default 500 ms). */
  httpRetries?: number;
  httpBackoffMs?: number;
}

export function createNovaPlugin(deps: NovaPluginDeps): BackendPlugin {
  const sleep: Sleep = deps.sleep ?? defaultSleep;
  const now = deps.now ?? Date.now;
  const os = deps.openstack;
  const http = createHttp({
    timeoutMs: os.requestTimeout * 1000,
    tls: { cacert: os.cacert, cert: os.cert, key: os.key, insecure: os.insecure },
    sleep,
    onApiRequest: deps.onApiRequest,
    onSlow: deps.onSlow,
    ...(deps.httpRetries !== undefined ? { retries: deps.httpRetries } : {}),
    ...(deps.httpBackoffMs !== undefined ? { backoffMs: deps.httpBackoffMs } : {}),
  });
  const session = new KeystoneSession({ openstack: os, http, now });
  const compute = new ComputeClient({ http, session, maxMicroversion: deps.nova.maxMicroversion });
  const placement = new PlacementClient({ http, session });
  return new NovaPlugin({
    compute,
    placement,
    nova: deps.nova,
    log: deps.log.child({ plugin: 'nova' }),
    sleep,
    now,
  });
}

export { ComputeClient } from './compute.ts';
export { KeystoneSession } from './keystone.ts';
export { createHttp } from './http.ts';
export type { NovaRecord } from './record.ts';
