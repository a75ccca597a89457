// The fleet-real bench's own parts that run without a real API server: its settings, and how it
// reads the API server's /metrics.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseMetrics, total } from '../../bench/lib/apiserver-metrics.ts';
import { fleetRealSettings } from '../../bench/scenarios/fleet-real-report.ts';

describe('fleet-real settings', () => {
  it('without a kubeconfig, says in one line that it does not run', () => {
    const why = fleetRealSettings({});
    if (typeof why !== 'string') throw new Error('expected the line that says why');
    expect(why).toContain('DRAINER_FLEET_KUBECONFIG');
    expect(why).not.toContain('\n');
  });

  it('names the bad setting', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fleet-real-'));
    const file = path.join(dir, 'kubeconfig');
    writeFileSync(file, 'apiVersion: v1\n');
    expect(() =>
      fleetRealSettings({ DRAINER_FLEET_KUBECONFIG: file, DRAINER_FLEET_SIZES: '10,many' }),
    ).toThrow(/DRAINER_FLEET_SIZES/);
    expect(() =>
      fleetRealSettings({ DRAINER_FLEET_KUBECONFIG: file, DRAINER_FLEET_AGENTS_PER_PROCESS: '0' }),
    ).toThrow(/DRAINER_FLEET_AGENTS_PER_PROCESS/);
    const ok = fleetRealSettings({ DRAINER_FLEET_KUBECONFIG: file });
    expect(ok).toMatchObject({ sizes: [10, 100, 1000], budget: 10 });
    expect(ok).not.toHaveProperty('restart');
  });
});

describe("the API server's metrics as the bench reads them", () => {
  const text = [
    '# HELP apiserver_request_total Counter of apiserver requests',
    '# TYPE apiserver_request_total counter',
    'apiserver_request_total{code="200",component="apiserver",resource="nodes",verb="GET"} 12',
    'apiserver_request_total{code="200",component="apiserver",resource="leases",verb="PUT"} 30',
    'apiserver_request_total{code="0",component="apiserver",resource="nodes",verb="WATCH"} 4',
    'apiserver_longrunning_requests{component="apiserver",resource="nodes",scope="cluster",verb="WATCH"} 7',
    'apiserver_storage_objects{resource="nodes"} 1000',
    '',
  ].join('\n');

  it('sums a metric over the samples a filter keeps', () => {
    const s = parseMetrics(text);
    expect(total(s, 'apiserver_request_total')).toBe(46);
    expect(total(s, 'apiserver_request_total', (l) => l.verb !== 'WATCH')).toBe(42);
    expect(total(s, 'apiserver_longrunning_requests', (l) => l.verb === 'WATCH')).toBe(7);
    expect(s.find((x) => x.name === 'apiserver_storage_objects')?.labels.resource).toBe('nodes');
  });
});
