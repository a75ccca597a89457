// Story: a daemon evacuates a node of the sandbox; every metric the alert rules and the dashboard
// of daemonset/monitoring/ select is one its /metrics exposes (histograms by _bucket/_sum/_count).
// Renaming a metric in src/observability/metrics.ts fails this test. The record carries the
// per-plugin progress `drainer status` shows.
import { afterAll, describe, expect, it } from 'vitest';
import { EXTERNAL_METRICS, exposedNames, expressions, parsePromql } from '../daemonset/promql.ts';
import { startDaemon } from './daemon-run.ts';
import { smallWorld } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';

describe('the monitoring kit against a real daemon', () => {
  let stack: Stack | undefined;
  afterAll(async () => stack?.close());

  it('every metric name in the alerts and the dashboard is exposed by /metrics after an evacuation', async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 3 }) });
    const s = stack;
    const daemon = await startDaemon(s, 'node-a');
    await s.cordon('node-a');
    await until('evacuated', async () => (await s.record('node-a'))?.phase === 'Evacuated');
    const exposed = exposedNames((await daemon.get('/metrics')).text);
    await daemon.stop();

    const used = new Map<string, string>();
    for (const e of expressions()) for (const m of parsePromql(e.expr).metrics) used.set(m, e.where);
    expect(used.size).toBeGreaterThan(8);
    const missing = [...used].filter(([m]) => !exposed.has(m) && !EXTERNAL_METRICS.has(m));
    expect(missing.map(([m, where]) => `${m} (${where})`)).toEqual([]);
    // and the check bites: a name the daemon does not export is reported
    expect(exposed.has('drainer_migrations_total')).toBe(true);
    expect(exposed.has('drainer_migration_duration_seconds_bucket')).toBe(true);
    expect(exposed.has('drainer_migration_total')).toBe(false);

    // the record's progress, as drainer status shows it: counts, the memory left and the copy rate
    expect((await s.record('node-a'))?.progress).toEqual({
      nova: {
        moved: 3,
        total: 3,
        failed: 0,
        onHost: 0,
        stopped: 0,
        memoryLeftBytes: 0,
        bytesPerSecond: expect.any(Number),
      },
    });
  });
});
