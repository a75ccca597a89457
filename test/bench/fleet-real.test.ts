// The fleet-real bench's own parts that run without a real API server: its settings, how it
// reads the API server's /metrics, and what it does in the kubelets' place.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { parseMetrics, total } from '../../bench/lib/apiserver-metrics.ts';
import { OwnRequests, STATUS_REPORT_MS, statusReports } from '../../bench/lib/kubelets.ts';
import type { KubeObject } from '../../src/sandbox/kube/index.ts';
import { node, startFixture } from '../kube/sandbox.ts';
import { fleetRealSettings } from '../../bench/scenarios/fleet-real-report.ts';
import { restartRows } from '../../bench/scenarios/fleet-real-restart.ts';

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

describe('an API-server restart, judged by issue 51: no agent storms', () => {
  const restart = { downS: 80, rewatchS: 16, watchesBefore: 5097, watchesAfter: 5098, idlePerSecond: 10 };
  const verdicts = (rows: ReturnType<typeof restartRows>) =>
    rows.map((r) => [r.figure.split(', ')[1], r.value, r.pass]);

  it('passes a fleet that comes back at under one request per agent per second, each watch opened at most twice', () => {
    const rows = restartRows('1,000 agents', 1000, {
      ...restart,
      peakPerSecond: 876.3,
      peakPerAgentPerSecond: 0.8763,
      mostOpensOfOneWatch: 2,
    });
    expect(verdicts(rows)).toEqual([
      ['until every watch is back', 16, true],
      ['peak requests per second per agent', 0.88, true],
      ["most opens of one agent's watch in the 60 s after", 2, true],
    ]);
  });

  it('fails an agent that opens one watch a third time, or a second with more requests than agents', () => {
    const rows = restartRows('10 agents', 10, {
      ...restart,
      peakPerSecond: 12,
      peakPerAgentPerSecond: 1.2,
      mostOpensOfOneWatch: 3,
    });
    expect(rows.map((r) => r.pass)).toEqual([true, false, false]);
  });

  it('judges a run from before the per-agent figures by its peak, and says the opens were not measured', () => {
    const rows = restartRows('1,000 agents', 1000, { ...restart, peakPerSecond: 876.3 });
    expect(verdicts(rows).slice(1)).toEqual([
      ['peak requests per second per agent', 0.88, true],
      ["most opens of one agent's watch in the 60 s after", 'not measured', undefined],
    ]);
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

describe('the kubelets the fleet has not', () => {
  it("post each Node's status every 5 minutes, spread over them, and the bench counts those requests as its own", async () => {
    const fx = await startFixture();
    const stop = new AbortController();
    onTestFinished(async () => {
      stop.abort();
      vi.useRealTimers();
      await fx.close();
    });
    const server = fx.server;
    const nodes = ['n1', 'n2', 'n3', 'n4'];
    for (const name of nodes) {
      const conditions = [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }];
      server.store.create('nodes', node(name, { status: { conditions } }));
    }
    const own = new OwnRequests(fx.k);
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'],
      shouldAdvanceTime: true,
    });
    const from = Date.now();
    statusReports(own, nodes, stop.signal);
    const reports = () => server.requestLog.filter((r) => r.method === 'PATCH').map((r) => r.path);

    // a quarter of the period: the first Node only; then the others, one each quarter
    await vi.advanceTimersByTimeAsync(STATUS_REPORT_MS / 4 - 1000);
    await vi.waitFor(() => expect(reports()).toEqual(['/api/v1/nodes/n1/status']));
    await vi.advanceTimersByTimeAsync((STATUS_REPORT_MS * 3) / 4);
    await vi.waitFor(() => expect(reports()).toHaveLength(4));
    expect(new Set(reports()).size).toBe(4);
    await vi.advanceTimersByTimeAsync(STATUS_REPORT_MS);
    await vi.waitFor(() => expect(reports()).toHaveLength(8));

    // the heartbeat only: the status the node lifecycle controller gave the Node stays
    const n3 = server.store.get('nodes', '', 'n3') as KubeObject & {
      status: { conditions: Record<string, string>[] };
    };
    expect(n3.status.conditions).toEqual([
      expect.objectContaining({ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }),
    ]);
    expect(n3.status.conditions[0]?.lastHeartbeatTime).toBeDefined();
    // the API server logs a request before its answer reaches the bench, which logs it then
    await vi.waitFor(() => expect(own.byKey(from, Date.now() + 1)).toEqual({ 'PATCH nodes/status': 8 }));
  });
});
