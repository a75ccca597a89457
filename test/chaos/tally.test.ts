// Story: what RELIABILITY.md counts. A drain is judged only when it returned success with its node
// not put back in service meanwhile and no operator release in its maintenance; the VMs on the host
// at each return are counted as they were. Kured drains the nodes that declare a reboot, Karpenter and
// Cluster API the others; an operator's command goes to a node in maintenance.
import { describe, expect, it } from 'vitest';
import { judged, withReleases } from '../../bench/chaos/check.ts';
import { agentTakenOffEmpty, leftWithoutAgent } from '../../bench/chaos/agent-off.ts';
import type { DrainReturn } from '../../bench/chaos/drains.ts';
import { inMaintenance } from '../../bench/chaos/faults.ts';
import { FLEET_NODES, REBOOT_NODES } from '../../bench/chaos/fleet.ts';
import { drainable } from '../../bench/chaos/soak.ts';
import { histogramText, tallyDrains, tallyOwners } from '../../bench/chaos/tally.ts';

const ret = (o: Partial<DrainReturn> & { vms?: number }): DrainReturn => ({
  node: 'hv-1',
  kind: 'kubectl',
  round: 1,
  ok: true,
  onHost: { occupying: Array.from({ length: o.vms ?? 0 }, (_, i) => `server s${i}`), stopped: [] },
  startedWith: 4,
  contradicted: false,
  released: false,
  ms: 3000,
  startedAt: 0,
  returnedAt: 3000,
  ...o,
});

describe('an operator release under way when a drain returned', () => {
  // `drainer release` opens the gate while its command runs; the soak records it when the command ends
  const release = { node: 'hv-1', from: 2000 };

  it('excuses a return after its start, not one before it or on another node', () => {
    expect(judged(withReleases(ret({ vms: 3, returnedAt: 2500 }), [release]))).toBe(false);
    expect(judged(withReleases(ret({ vms: 3, returnedAt: 1500 }), [release]))).toBe(true);
    expect(judged(withReleases(ret({ vms: 3, node: 'hv-2', returnedAt: 2500 }), [release]))).toBe(true);
  });

  it('nor one after the maintenance it was given in ended', () => {
    expect(judged(withReleases(ret({ vms: 3, returnedAt: 2500 }), [{ ...release, until: 2400 }]))).toBe(true);
  });
});

// The operator takes drainer's agent off an empty node (drainer.dev/agent=disabled): its stop drops the
// gate, as it must; the host stays in service, Nova may place servers there, and a drain then returns
// with them, by the operator's choice (chaos seed 9 at 47342bb: agent-off hv-3 in round 25, then two
// drains of hv-3 returned with 9 servers other evacuations had landed there). Taken off with VMs on
// it, the agent keeps the gate: a return with VMs there still counts, as does one where the agent runs.
describe('a drain of a node whose agent the operator took off', () => {
  const fleet = (disabled: string[], offWithVms: string[] = []) => ({
    disabled: new Set(disabled),
    offWithVms: new Set(offWithVms),
    gateDeletedOff: new Set<string>(),
  });

  it('is not judged when the agent was taken off with nothing on the node', () => {
    const agentOff = agentTakenOffEmpty(fleet(['hv-3']), 'hv-3');
    expect(agentOff).toBe(true);
    expect(judged(ret({ node: 'hv-3', vms: 9, agentOff }))).toBe(false);
  });

  it('is judged when the agent was taken off with VMs on the node (it kept the gate for them)', () => {
    const agentOff = agentTakenOffEmpty(fleet(['hv-3'], ['hv-3']), 'hv-3');
    expect(agentOff).toBe(false);
    expect(judged(ret({ node: 'hv-3', vms: 9, agentOff }))).toBe(true);
  });

  // chaos seed 13 at ac23661: blade-1's agent taken off with VMs on it (round 20), then `drainer restore
  // --node blade-1 --force` (round 31) gave the host back with none left: the restore drops a gate no
  // agent keeps on an empty host, Nova placed servers there, and two drains returned with them
  it('is not judged once the operator gave such a node back into service empty (restore --force)', () => {
    const f = fleet(['hv-3'], ['hv-3']);
    leftWithoutAgent(f, 'hv-3', []);
    const agentOff = agentTakenOffEmpty(f, 'hv-3');
    expect(agentOff).toBe(true);
    expect(judged(ret({ node: 'hv-3', vms: 3, agentOff }))).toBe(false);
  });

  it('is judged when the restore left VMs on the host (its gate stays for them)', () => {
    const f = fleet(['hv-3'], ['hv-3']);
    leftWithoutAgent(f, 'hv-3', ['server s0']);
    expect(agentTakenOffEmpty(f, 'hv-3')).toBe(false);
    // a node whose agent runs has nothing to give back this way
    const running = fleet([]);
    leftWithoutAgent(running, 'hv-3', []);
    expect(agentTakenOffEmpty(running, 'hv-3')).toBe(false);
  });

  it('is judged on a node whose agent runs, whatever another node went through', () => {
    const agentOff = agentTakenOffEmpty(fleet(['hv-2']), 'hv-3');
    expect(agentOff).toBe(false);
    expect(judged(ret({ node: 'hv-3', vms: 9, agentOff }))).toBe(true);
  });
});

describe('drains as RELIABILITY.md counts them', () => {
  it('judges a success only when nobody put the node back and no operator released its gate', () => {
    const started = { kubectl: 5, 'disable-eviction': 0, karpenter: 0, capi: 1, kured: 0 };
    const t = tallyDrains(started, [
      ret({}),
      ret({ vms: 2 }),
      ret({ vms: 3, contradicted: true }),
      ret({ vms: 1, released: true }),
      ret({ ok: false, vms: 4 }),
      ret({ kind: 'capi' }),
    ]);
    const kubectl = t.find((d) => d.kind === 'kubectl');
    expect(kubectl).toMatchObject({
      started: 5,
      returned: 5,
      succeeded: 4,
      judged: 2,
      occupied: 1,
      overruled: 1,
      released: 1,
    });
    expect(histogramText(kubectl!.atJudged)).toBe('0 VMs ×1, 2 VMs ×1');
    expect(histogramText(kubectl!.atGaveUp)).toBe('4 VMs ×1');
    expect(t.find((d) => d.kind === 'capi')?.judged).toBe(1);
    expect(histogramText(t.find((d) => d.kind === 'kured')!.atJudged)).toBe('—');
  });

  it("counts owners' actions by Nova's answer", () => {
    const t = tallyOwners([
      { action: 'stop', server: 'a', status: 202 },
      { action: 'shelve', server: 'a', status: 400 },
      { action: 'shelve', server: 'b', status: 400 },
      { action: 'unshelve' },
    ]);
    expect(t.find((o) => o.action === 'stop')).toMatchObject({ asked: 1, accepted: 1, nothing: 0 });
    expect(t.find((o) => o.action === 'shelve')).toMatchObject({ asked: 2, accepted: 0 });
    expect([...t.find((o) => o.action === 'shelve')!.refused]).toEqual([[400, 2]]);
    expect(t.find((o) => o.action === 'unshelve')).toMatchObject({ asked: 0, nothing: 1 });
  });
});

describe('who drains which node, and which node an operator acts on', () => {
  it('kured reboots only the nodes that declare a reboot; Karpenter and Cluster API replace only the others', () => {
    for (const n of FLEET_NODES) {
      const reboot = REBOOT_NODES.includes(n);
      expect(drainable('kured', n), n).toBe(reboot);
      expect(drainable('karpenter', n), n).toBe(!reboot);
      expect(drainable('capi', n), n).toBe(!reboot);
      expect(drainable('kubectl', n), n).toBe(true);
    }
  });

  it('an operator acts on the drawn node if it is in maintenance, else the next one in fleet order', () => {
    const inMaint = new Set(['hv-3']);
    const m = { current: (n: string) => (inMaint.has(n) ? 1 : undefined) };
    expect(inMaintenance('hv-3', m)).toBe('hv-3');
    expect(inMaintenance('hv-1-b', m)).toBe('hv-3');
    expect(inMaintenance('hv-4', m)).toBe('hv-3'); // wraps around
    inMaint.clear();
    expect(inMaintenance('hv-1', m)).toBeUndefined();
  });
});
