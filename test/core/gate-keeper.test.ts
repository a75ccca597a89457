// The end of the gate at an agent's stop: only an uninstall (drainer's DaemonSet gone, with no
// successor) releases it; a DaemonSet replaced (`kubectl replace --force`) keeps every gate held.
import { describe, expect, it } from 'vitest';
import { DrainGate } from '../../src/core/gate/gate.ts';
import { gateKeeper } from '../../src/core/gate/keeper.ts';
import type { KubeClients } from '../../src/kube/client.ts';
import { gateName } from '../../src/kube/gate.ts';
import { quietLogger } from './fakes.ts';
import { FakeGateApi } from './fake-gate.ts';

function keeperOver(answers: boolean[]) {
  const api = new FakeGateApi();
  const log = quietLogger();
  const gate = new DrainGate({ api, log, podOf: (n) => ({ namespace: 'drainer', name: gateName(n) }) });
  const keeper = gateKeeper({
    k: {} as KubeClients,
    namespace: 'drainer',
    nodeName: 'n1',
    gate,
    uninstalled: async () => answers.shift() ?? false,
    log,
    successorWaitMs: 5,
  });
  return { api, gate, keeper };
}

describe('gate keeper at the agent stop', () => {
  it('a DaemonSet gone at the stop and made again a moment later (replace --force): the gate stays', async () => {
    const { api, gate, keeper } = keeperOver([true, false]);
    await gate.set('n1', true);
    await keeper.atStop();
    expect(api.calls).not.toContain('release n1');
    expect(api.guards('n1')).toBe(true);
  });

  it('gone, and still gone: an uninstall, the gate is released', async () => {
    const { api, gate, keeper } = keeperOver([true, true]);
    await gate.set('n1', true);
    await keeper.atStop();
    expect(api.guards('n1')).toBe(false);
  });
});
