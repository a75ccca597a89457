// The sandbox Nova a story runs against: started by the test on a clock 100× faster, closed after
// it; the servers it starts on compute-a; and the calls of someone else (an owner, an operator)
// through Nova's API.
import { afterEach } from 'vitest';
import type { Outcome } from '../../../src/core/backends/plugin.ts';
import { ScaledClock } from '../../../src/sandbox/clock.ts';
import {
  startOpenStack,
  type OpenStackSandbox,
  type ServerSpec,
  type StartOpenStackOptions,
} from '../../../src/sandbox/openstack/index.ts';
import { nova as call, token } from '../../sandbox/openstack/client.ts';

export interface SandboxNova {
  /** The running sandbox (the test started it). */
  readonly cloud: OpenStackSandbox;
  /** Starts it on a ScaledClock (×100 unless told), which it gives back. */
  start(opts: Omit<StartOpenStackOptions, 'clock'>, scale?: number): Promise<ScaledClock>;
  /** Someone else's call through Nova's API (the admin token: any project); a refusal throws. */
  readonly asAdmin: (method: string, path: string, body?: unknown) => Promise<void>;
}

/** Call at the top of a test file: each test starts its sandbox, closed after the test. */
export function sandboxNova(): SandboxNova {
  let cloud: OpenStackSandbox | undefined;
  afterEach(async () => {
    await cloud?.close();
    cloud = undefined;
  });
  const running = (): OpenStackSandbox => {
    if (!cloud) throw new Error('the test started no sandbox Nova');
    return cloud;
  };
  return {
    get cloud() {
      return running();
    },
    async start(opts, scale = 100) {
      const clock = new ScaledClock(scale);
      cloud = await startOpenStack({ clock, ...opts });
      return clock;
    },
    asAdmin: async (method, path, body) => {
      const os = running();
      const res = await call(os, method, path, { token: await token(os), version: '2.93', body });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status}`);
    },
  };
}

/** A server on compute-a (project demo), named by its id. */
export const onComputeA = (id: string, extra: Partial<ServerSpec> = {}): ServerSpec => ({
  id,
  name: id,
  projectId: 'demo',
  host: 'compute-a',
  ...extra,
});

/** The outcome's line for one server. */
export const line = (o: Outcome, name: string) => o.workloads.find((w) => w.name === name);
