// drainer doctor names each server drainer stopped and marked (metadata drainer.dev:stopped) that no
// agent will start: its host is no node of the cluster, or the node's agent is gone. With the one
// command that starts it and takes the mark off. An operator finding: no component broke a promise.
import { describe, expect, it } from 'vitest';
import { readNovaWorld } from '../../src/invariants/read-nova.ts';
import { stopMarksWithoutAgent } from '../../src/invariants/rules/stop-mark-agent.ts';
import { OPERATOR_FINDINGS } from '../../src/invariants/violation.ts';
import type { World } from '../../src/invariants/world.ts';
import { liveAgent, node, OPTS, world } from './world.ts';

const MARK = { 'drainer.dev:stopped': 'node=node-1 trigger=cordon after=req-1 request=req-2' };
const nova = (host: string, status = 'SHUTOFF', metadata: Record<string, string> = MARK) => ({
  services: [{ host, status: 'enabled', disabledReason: null }],
  servers: [{ id: 's1', name: 'db-1', host, status, metadata }],
  migrations: [],
});

const findings = (w: Partial<World>) => stopMarksWithoutAgent(world({ nodes: [node('node-1')], ...w }), OPTS);

describe('marked servers no agent will start', () => {
  it('on a node whose agent is gone: named, with the command that starts it and takes the mark off', () => {
    const [v, ...more] = findings({ leases: [], nova: nova('node-1') });
    expect(more).toEqual([]);
    expect(v).toMatchObject({ id: 'stop-mark-without-agent', object: 'server/db-1' });
    expect(v?.evidence).toMatch(
      /db-1 \(s1\) carries drainer's stop mark .* SHUTOFF on node-1.*no agent runs/,
    );
    expect(v?.fix).toBe(
      'openstack server start s1 && openstack server unset --property drainer.dev:stopped s1',
    );
    expect(OPERATOR_FINDINGS.has('stop-mark-without-agent')).toBe(true);
  });

  it('on a host that is no node of the cluster', () => {
    expect(findings({ leases: [], nova: nova('hv-9') }).map((v) => v.evidence)).toEqual([
      expect.stringMatching(/SHUTOFF on hv-9, which is no node of this cluster/),
    ]);
  });

  it.each([
    ['its node has a live agent', { leases: [liveAgent('node-1')], nova: nova('node-1') }],
    ['it runs (its owner started it)', { leases: [], nova: nova('node-1', 'ACTIVE') }],
    ['it carries no mark', { leases: [], nova: nova('node-1', 'SHUTOFF', {}) }],
    ['the agents were not read', { nova: nova('node-1') }],
  ])('nothing when %s', (_what, w) => {
    expect(findings(w)).toEqual([]);
  });
});

describe("doctor's read of Nova", () => {
  it('takes in every SHUTOFF server, on hosts it would not otherwise look at', async () => {
    const stopped = { id: 's1', name: 'db-1', host: 'hv-9', status: 'SHUTOFF', metadata: MARK };
    const read = await readNovaWorld(
      {
        services: async () => [],
        serversOnHost: async () => [],
        migrationsFrom: async () => ({ migrations: [], servers: [] }),
        stoppedServers: async () => [stopped],
      },
      () => ['node-1'],
    );
    expect(read.servers).toEqual([stopped]);
  });
});
