// Story: the demo's drain act. A fleet tool drains a hypervisor (the real kubectl, and the
// Eviction-API loop a machine without kubectl gets); drainer's gate holds it while the servers move.
// Read from the act's report (Nova's state at the moment the drain returned), not from its screen.
import { describe, expect, it } from 'vitest';
import { kubectlOnPath, renderDrainSummary, runDrainAct } from '../../src/demo/drain-act.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Capture } from '../cli/harness.ts';
import { hasKubectl } from '../daemonset/kubectl.ts';

const act = async (kubectl: string | false) => {
  const out = new Capture(false);
  const report = await runDrainAct({
    out,
    log: createLogger({ level: 'silent' }),
    signal: new AbortController().signal,
    scale: 10,
    timeoutSeconds: 30,
    // the live view reads twice a second: its line lags the return by up to that much
    tickMs: 500,
    kubectl,
  });
  return { ...report, screen: out.text };
};

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
  // one drain return, one time: the live line and the summary say the same second
  const live = /\[([\d.]+) s\] drain returned:/.exec(r.screen)?.[1];
  const said = /the drain returned at ([\d.]+) s/.exec(summary)?.[1];
  expect(live, r.screen).toBeDefined();
  expect(live).toBe(said);
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
