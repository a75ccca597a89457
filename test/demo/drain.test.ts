// Story: the demo's drain act. A fleet tool drains a hypervisor (the real kubectl, and the
// Eviction-API loop a machine without kubectl gets); drainer's gate holds it while the servers move.
// Read from the act's report (Nova's state at the moment the drain returned), not from its screen.
import { describe, expect, it } from 'vitest';
import { kubectlOnPath, renderDrainSummary, runDrainAct } from '../../src/demo/drain-act.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Capture } from '../cli/harness.ts';
import { hasKubectl } from '../daemonset/kubectl.ts';

const act = (kubectl: string | false) =>
  runDrainAct({
    out: new Capture(false),
    log: createLogger({ level: 'silent' }),
    signal: new AbortController().signal,
    scale: 10,
    timeoutSeconds: 30,
    tickMs: 50,
    kubectl,
  });

function expectHeld(r: Awaited<ReturnType<typeof act>>) {
  expect(r.ok).toBe(true);
  expect(r.servers).toBe(2);
  expect(r.serversAtReturn).toBe(0);
  // the live view saw the drain held while servers were still on the node
  expect(r.heldReads).toBeGreaterThan(0);
  expect(r.returnedMs).toBeGreaterThanOrEqual(r.lastLeftMs ?? Number.POSITIVE_INFINITY);
  const summary = renderDrainSummary(r);
  expect(summary).toMatch(
    /the last of its 2 VMs left at [\d.]+ s, the drain returned at [\d.]+ s \([\d.]+ s after the last VM left/,
  );
  expect(summary).toContain('with 0 VMs on the node');
}

describe('demo drain act', () => {
  it.skipIf(!hasKubectl && !process.env.CI)(
    'kubectl drain waits until the last VM has left',
    async () => {
      const r = await act('/usr/bin/kubectl');
      expect(r.tool).toBe('kubectl drain');
      expectHeld(r);
    },
    40_000,
  );

  it('without kubectl, the Eviction-API loop waits the same way', async () => {
    const r = await act(false);
    expect(r.tool).toBe('Eviction API');
    expectHeld(r);
  }, 40_000);

  it('finds kubectl on a PATH, and says so when none has it', () => {
    expect(kubectlOnPath('/nonexistent:/also/not')).toBe(false);
    if (hasKubectl) expect(kubectlOnPath('/nonexistent:/usr/bin')).toBe('/usr/bin/kubectl');
  });
});
