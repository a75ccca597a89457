import { describe, expect, it } from 'vitest';
import { AuthError, TransientError } from '../../src/errors.ts';
import { CloudAuth } from '../../src/core/cluster/cloud-auth.ts';
import type { BackendPlugin } from '../../src/core/backends/plugin.ts';
import { captureLogger } from '../plugins/nova/helpers.ts';

function plugin(check: () => Promise<void>): BackendPlugin & { calls: number } {
  const p = {
    name: 'nova',
    calls: 0,
    plan: () => Promise.reject(new Error('unused')),
    evacuate: () => Promise.reject(new Error('unused')),
    restore: () => Promise.reject(new Error('unused')),
    checkAuth: async () => {
      p.calls++;
      await check();
    },
  };
  return p;
}

const rejected = () =>
  new AuthError('keystone POST /v3/auth/tokens → 401: credentials rejected', {
    api: 'keystone',
    status: 401,
  });

describe('cloud authentication check', () => {
  it('is not ready before the first check, and says in one line when the cloud rejects the credentials', async () => {
    let fail = true;
    const p = plugin(async () => {
      if (fail) throw rejected();
    });
    const verdicts: boolean[] = [];
    const { log, lines } = captureLogger();
    const auth = new CloudAuth({
      plugins: [p],
      log,
      signal: new AbortController().signal,
      intervalMs: 1000,
      sleep: async () => {},
      onVerdict: (_p, ok) => verdicts.push(ok),
    });

    expect(auth.reasons()).toEqual(['cloud credentials not checked yet']);
    await auth.check();
    expect(auth.reasons()).toEqual([
      'nova: cloud authentication failed: keystone POST /v3/auth/tokens → 401: credentials rejected',
    ]);
    await auth.check(); // the same failure again: logged once
    fail = false;
    await auth.check();

    expect(auth.reasons()).toEqual([]);
    expect(verdicts).toEqual([false, false, true]);
    expect(lines.filter((l) => l.includes('cloud authentication failed'))).toHaveLength(1);
  });

  it('leaves the verdict alone when the cloud cannot be reached (an outage, not a wrong secret)', async () => {
    const p = plugin(async () => {
      throw new TransientError('keystone unreachable', { api: 'keystone' });
    });
    const auth = new CloudAuth({
      plugins: [p],
      log: captureLogger().log,
      signal: new AbortController().signal,
      intervalMs: 1000,
      sleep: async () => {},
    });

    await auth.check();

    expect(auth.reasons()).toEqual([]);
  });

  it('checks at start and once per interval until stopped', async () => {
    const stop = new AbortController();
    const p = plugin(async () => {});
    const sleeps: number[] = [];
    const auth = new CloudAuth({
      plugins: [p],
      log: captureLogger().log,
      signal: stop.signal,
      intervalMs: 30_000,
      sleep: async (ms) => {
        sleeps.push(ms);
        if (sleeps.length === 3) stop.abort();
      },
    });

    await auth.run();

    expect(p.calls).toBe(3);
    expect(sleeps).toEqual([30_000, 30_000, 30_000]);
  });
});
