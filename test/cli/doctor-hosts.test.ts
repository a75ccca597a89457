// Which hosts doctor reads the servers of. On the real suite (09d) a node's agent taken off by
// drainer.dev/agent=disabled with a server still on its host: doctor read no host (no record, no
// disabled service, no migration Event), saw 0 servers, and named the gate gate-without-keeper
// ("nothing is left on the node to protect") with the fix `drainer release`, which then refuses.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { hostsToRead } from '../../src/cli/doctor.ts';
import { holdingGate, liveAgent, node, world } from '../invariants/world.ts';

const config = configSchema.parse({});
const services = [{ host: 'node-1', status: 'enabled', disabledReason: null }];

describe('the hosts doctor reads', () => {
  it("reads the host of a node whose gate stands with no live agent: the gate's verdict needs its servers", () => {
    const kube = world({ nodes: [node('node-1')], ...holdingGate('node-1'), leases: [] });
    expect(hostsToRead(kube, config, services)).toEqual(['node-1']);
  });

  it("reads the host of a node whose agent published logind's cap: its servers weigh against it", () => {
    const n = node('node-1');
    const kube = world({
      nodes: [{ ...n, annotations: { ...n.annotations, 'drainer.dev/logind-delay-max': '30' } }],
      leases: [liveAgent('node-1')],
    });
    expect(hostsToRead(kube, config, services)).toEqual(['node-1']);
  });

  it('leaves a node alone whose agent is alive and that has no record (its servers are no finding)', () => {
    const kube = world({ nodes: [node('node-1')], ...holdingGate('node-1'), leases: [liveAgent('node-1')] });
    expect(hostsToRead(kube, config, services)).toEqual([]);
  });
});
