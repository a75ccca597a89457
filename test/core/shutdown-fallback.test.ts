// Story: logind's time is up with VMs still on the host. Each plugin that has a fallback does it (Nova
// stops its servers, marked); one without leaves its VMs to their own policy; one that fails says so.
// The one line that follows says all of it, and no plugin's trouble keeps the lock from going back.
import { describe, expect, it } from 'vitest';
import type { BackendPlugin, ShutdownFallback } from '../../src/core/backends/plugin.ts';
import { fallBack } from '../../src/core/shutdown/fallback.ts';
import { quietLogger } from './fakes.ts';

const plugin = (name: string, atShutdown?: () => Promise<ShutdownFallback>): BackendPlugin => ({
  name,
  plan: () => Promise.reject(new Error('not asked')),
  evacuate: () => Promise.reject(new Error('not asked')),
  restore: () => Promise.reject(new Error('not asked')),
  ...(atShutdown ? { atShutdown } : {}),
});

const run = (...plugins: BackendPlugin[]) =>
  fallBack(
    plugins,
    { name: 'node-7' },
    { log: quietLogger(), signal: AbortSignal.timeout(1000), marginMs: 1000 },
  );

describe("the fallback at a host shutdown's deadline", () => {
  it('says what each plugin stopped, left to finish and left as it was', async () => {
    const nova = plugin('nova', async () => ({
      stopped: ['vm-1', 'vm-2'],
      migrating: ['vm-3'],
      left: [{ id: 'vm-4', why: 'busy: task_state rebooting' }],
    }));
    expect(await run(nova, plugin('kubevirt'))).toBe(
      'nova: 2 stopped (marked: started again after boot), 1 migration left to finish, ' +
        '1 left as it is (vm-4: busy: task_state rebooting); ' +
        "kubevirt: its VMs are left to their own policy (KubeVirt: each VM's run strategy)",
    );
  });

  it('says nothing was left when nothing was', async () => {
    const nova = plugin('nova', async () => ({ stopped: [], migrating: [], left: [] }));
    expect(await run(nova)).toBe('nova: nothing left to stop');
  });

  it("names a plugin's failure and goes on with the others", async () => {
    const nova = plugin('nova', () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:8774')));
    expect(await run(nova, plugin('kubevirt'))).toMatch(
      /^nova: fallback failed: connect ECONNREFUSED 127.0.0.1:8774; kubevirt: /,
    );
  });
});
