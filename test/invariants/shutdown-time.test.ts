// drainer doctor names a node whose host's logind would not wait long enough for its evacuation: the agent
// publishes logind's cap on its Node (drainer.dev/logind-delay-max, seconds, read on the host's bus), and
// doctor weighs it against the memory of the servers on the host at shutdown.migrationRate.
import { describe, expect, it } from 'vitest';
import { LOGIND_DELAY_ANNOTATION } from '../../src/core/shutdown/mark.ts';
import { shutdownTimeShort } from '../../src/invariants/rules/shutdown-time.ts';
import { OPERATOR_FINDINGS } from '../../src/invariants/violation.ts';
import type { WorldServer } from '../../src/invariants/world.ts';
import { node, OPTS, world } from './world.ts';

const servers = (n: number, memoryMb = 16_384): WorldServer[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `s${i}`,
    name: `vm-${i}`,
    host: 'node-1',
    status: 'ACTIVE',
    memoryMb,
  }));
const nova = (n: number) => ({
  services: [{ host: 'node-1', status: 'enabled', disabledReason: null }],
  servers: servers(n),
  migrations: [],
});
const shutdown = { rateMiBps: 1024, atOnce: 1, marginSeconds: 5 };
const withCap = (seconds: string) => {
  const n = node('node-1');
  return { ...n, annotations: { ...n.annotations, [LOGIND_DELAY_ANNOTATION]: seconds } };
};

describe("logind's time against the node's evacuation", () => {
  it('names a node whose logind would leave VMs to their fallback, with what to raise', () => {
    const [v, ...more] = shutdownTimeShort(world({ nodes: [withCap('30')], nova: nova(2) }), {
      ...OPTS,
      shutdown,
    });
    expect(more).toEqual([]);
    expect(v).toMatchObject({ id: 'shutdown-time-short', object: 'node/node-1' });
    expect(v?.evidence).toMatch(
      /^shutdown: logind gives 30s .* needs about 47s .*leaves VMs to their fallback/,
    );
    expect(v?.fix).toMatch(/raise the kubelet's shutdownGracePeriod .* to 47s or more/);
    expect(OPERATOR_FINDINGS.has('shutdown-time-short')).toBe(true);
  });

  it('finds nothing where the time covers it, where the agent published no cap, or with no servers', () => {
    const opts = { ...OPTS, shutdown };
    expect(shutdownTimeShort(world({ nodes: [withCap('600')], nova: nova(2) }), opts)).toEqual([]);
    expect(shutdownTimeShort(world({ nodes: [node('node-1')], nova: nova(2) }), opts)).toEqual([]);
    expect(shutdownTimeShort(world({ nodes: [withCap('5')], nova: nova(0) }), opts)).toEqual([]);
  });
});
