// Story (fleet-real bench, 1,000 agents started together on a 2-core control plane): the API server,
// busy with every agent's start-up, timed out the gates' reads, so no agent saw its gate hold. Each
// in-service agent put its stranded look off until the gate holds and came back every 2 s, a pass
// with a Node read each time: 0.34 Node reads a second per agent kept the handlers timing out, and
// the fleet never went idle in 10 minutes. A look put off again and again now comes back later each
// time (2 s, doubling, up to the resync), and at 2 s again once it has looked.
import { describe, expect, it } from 'vitest';
import type { NodeRun } from '../../src/core/agent/run-context.ts';
import { PUT_OFF_AGAIN_MS, StrandedLooks } from '../../src/core/agent/stranded-looks.ts';

/** node-1's pass, its gate held or not (no plugin finds anything stranded). */
function passOf(gate: { held: boolean }): NodeRun {
  return {
    nodeName: 'node-1',
    node: { metadata: { name: 'node-1', uid: 'uid-1', annotations: {} } },
    deps: {
      gate: { whenHeld: async () => gate.held },
      host: {},
      config: { dryRun: false },
    },
    signal: new AbortController().signal,
    now: () => new Date(),
  } as unknown as NodeRun;
}

describe('a stranded look put off until the gate holds', () => {
  const resyncMs = 300_000;

  it('comes back after 2 s, then 4, 8 … while the gate is not seen holding, never past the resync', async () => {
    const looks = new StrandedLooks(900, () => Date.now());
    const gate = { held: false };
    const waits: number[] = [];
    for (let i = 0; i < 10; i++) {
      expect(await looks.look(passOf(gate), true)).toBe(false);
      waits.push(looks.againMs('node-1', resyncMs));
    }
    expect(waits.slice(0, 4)).toEqual([2000, 4000, 8000, 16_000]);
    expect(waits.at(-1)).toBe(resyncMs);
  });

  it('once the gate holds it looks, and a later put-off starts at 2 s again', async () => {
    const looks = new StrandedLooks(900, () => Date.now());
    const gate = { held: false };
    for (let i = 0; i < 5; i++) await looks.look(passOf(gate), true);
    gate.held = true;

    expect(await looks.look(passOf(gate), true)).toBe(true);

    expect(looks.againMs('node-1', resyncMs)).toBe(PUT_OFF_AGAIN_MS);
  });
});
