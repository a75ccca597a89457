// Shared arrangements: offline nock, config, a fake clock that moves only when the code sleeps, a
// capturing logger, and an EvacuationContext with an in-memory record.
import { Writable } from 'node:stream';
import nock from 'nock';
import { afterEach, beforeEach } from 'vitest';
import {
  novaSchema,
  openstackSchema,
  type NovaConfig,
  type OpenStackConfig,
} from '../../../src/config/schema.ts';
import type {
  EvacuationContext,
  PluginRecord,
  RestoreContext,
  WorkloadProgress,
} from '../../../src/core/backends/plugin.ts';
import { createLogger, type Logger } from '../../../src/observability/logger.ts';
import { createNovaPlugin } from '../../../src/plugins/nova/index.ts';
import { IDENTITY, PASSWORD, type FakeNova } from './fake-nova.ts';

/** Registers hooks: no test reaches the real network, and none leaves interceptors to the next. */
export function offlineNock(): void {
  beforeEach(() => nock.disableNetConnect());
  afterEach(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });
}

export function openstackConfig(overrides: Record<string, unknown> = {}): OpenStackConfig {
  return openstackSchema.parse({
    auth: {
      authUrl: IDENTITY,
      username: 'admin',
      password: PASSWORD,
      userDomainName: 'Default',
      projectName: 'admin',
      projectDomainName: 'Default',
    },
    regionName: 'RegionOne',
    ...overrides,
  });
}

export function novaConfig(overrides: Record<string, unknown> = {}): NovaConfig {
  return novaSchema.parse({ pollInterval: 1, retryBackoff: 1, migrationTimeout: 60, ...overrides });
}

/** Time that passes only when someone sleeps: deadlines and backoffs without waiting. */
export class FakeClock {
  t = Date.parse('2030-01-01T00:00:00Z');
  readonly sleeps: number[] = [];
  now = (): number => this.t;
  sleep = async (ms: number, signal?: AbortSignal): Promise<void> => {
    if (signal?.aborted) throw signal.reason;
    this.sleeps.push(ms);
    this.t += ms;
    await new Promise((r) => setImmediate(r));
    if (signal?.aborted) throw signal.reason;
  };
}

export function captureLogger(level = 'debug'): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { log: createLogger({ level, destination }), lines };
}

export interface Harness {
  plugin: ReturnType<typeof createNovaPlugin>;
  clock: FakeClock;
  log: Logger;
  lines: string[];
  apiCodes: string[];
}

export function harness(
  fake: FakeNova,
  opts: { nova?: Record<string, unknown>; openstack?: Record<string, unknown> } = {},
): Harness {
  const clock = new FakeClock();
  fake.now = clock.now;
  const { log, lines } = captureLogger();
  const apiCodes: string[] = [];
  const plugin = createNovaPlugin({
    nova: novaConfig(opts.nova),
    openstack: openstackConfig(opts.openstack),
    log,
    sleep: clock.sleep,
    now: clock.now,
    onApiRequest: (api, code) => apiCodes.push(`${api} ${code}`),
  });
  return { plugin, clock, log, lines, apiCodes };
}

export interface TestContext extends EvacuationContext {
  saved: PluginRecord[];
  progressSeen: (readonly WorkloadProgress[])[];
  controller: AbortController;
}

export function evacuationContext(
  h: Harness,
  opts: {
    record?: PluginRecord;
    dryRun?: boolean;
    abortOnCancel?: boolean;
    trigger?: string;
    /** Called with each progress report and the context's abort controller. */
    onProgress?: (items: readonly WorkloadProgress[], controller: AbortController) => void;
    onSave?: (record: PluginRecord) => void;
  } = {},
): TestContext {
  const controller = new AbortController();
  const saved: PluginRecord[] = [];
  const progressSeen: (readonly WorkloadProgress[])[] = [];
  const ctx: TestContext = {
    log: h.log,
    signal: controller.signal,
    deadline: new Date(h.clock.t + 3_600_000),
    trigger: opts.trigger ?? 'cordon',
    dryRun: opts.dryRun ?? false,
    abortOnCancel: opts.abortOnCancel ?? false,
    progress: (items) => {
      progressSeen.push(items);
      opts.onProgress?.(items, controller);
    },
    get record() {
      return saved.at(-1) ?? opts.record;
    },
    save: async (r) => {
      opts.onSave?.(r);
      saved.push(r);
    },
    saved,
    progressSeen,
    controller,
  };
  return ctx;
}

export function restoreContext(h: Harness, record: PluginRecord | undefined, dryRun = false): RestoreContext {
  return {
    log: h.log,
    signal: new AbortController().signal,
    dryRun,
    record,
    save: async () => {},
  };
}
