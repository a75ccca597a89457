// What an owner's os-stop, os-start, shelve and unshelve look like, on the real Nova and on the
// sandbox's: the same script against both, the same answers (status, Nova's message), the same end
// states, and every state the real one was seen passing through (task_state powering-off,
// shelving…, SHELVED_OFFLOADED with no host) is one the sandbox passes through too, in that order.
// The sandbox's timings are short (the real stack's fake driver powers off at once); what is
// compared is the path, not its length.
import { describe, expect, it } from 'vitest';
import { ScaledClock } from '../../src/sandbox/clock.ts';
import { startOpenStack } from '../../src/sandbox/openstack/index.ts';
import { differences, ownerScript } from './support/owner-script.ts';
import { sandboxCloud } from './support/sandbox-cloud.ts';
import { Session } from './support/session.ts';
import { useWorld } from './support/world.ts';

const world = useWorld();

describe("an owner's power and shelve actions, the real Nova against the sandbox's", () => {
  it('answers and passes through the same states', async () => {
    const w = world();
    const [server] = await w.boot([{ label: 'oa-owner' }]);
    const real = await ownerScript(w.admin, server!.id);

    // seconds, not Nova's defaults: long enough to be seen by a 100 ms poll, short enough for a test
    const os = await startOpenStack({
      clock: new ScaledClock(1),
      hosts: [{ name: w.settings.sourceHost }, { name: w.settings.targetHost }],
      servers: [{ id: 'oa-owner', name: 'oa-owner', projectId: 'admin', host: w.settings.sourceHost }],
      timings: { shutdownMs: 1500, powerOnMs: 1000, snapshotMs: 2000 },
    });
    w.cleanup.add('sandbox openstack', () => os.close());
    const emulated = await ownerScript(await Session.open(sandboxCloud(os)), 'oa-owner');

    console.log(`owner actions, real: ${JSON.stringify(real)}`);
    expect(differences(real, emulated)).toEqual([]);
  });
});
