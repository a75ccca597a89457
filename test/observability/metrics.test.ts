import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/observability/metrics.ts';

describe('Metrics', () => {
  it('exposes every metric of the design with its labels, plus process metrics', async () => {
    const m = new Metrics();
    m.evacuations.inc({ result: 'succeeded' });
    m.evacuationDuration.observe(12);
    m.migrations.inc({ plugin: 'nova', result: 'failed' });
    m.migrationDuration.observe({ plugin: 'nova' }, 30);
    m.migrationsInFlight.set({ plugin: 'kubevirt' }, 2);
    m.evictions.inc({ code: '429' });
    m.apiRequest('keystone', '201');
    const text = await m.text();
    for (const line of [
      'drainer_evacuations_total{result="succeeded"} 1',
      'drainer_evacuation_duration_seconds_count 1',
      'drainer_migrations_total{plugin="nova",result="failed"} 1',
      'drainer_migration_duration_seconds_count{plugin="nova"} 1',
      'drainer_migrations_in_flight{plugin="kubevirt"} 2',
      'drainer_evictions_total{code="429"} 1',
      'drainer_node_phase{phase="InService"} 1',
      'drainer_api_requests_total{api="keystone",code="201"} 1',
      '# TYPE drainer_plugin_errors_total counter',
      '# TYPE process_cpu_seconds_total counter',
    ]) {
      expect(text).toContain(line);
    }
  });

  it('keeps exactly one node phase at 1', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.setPhase('Evacuating');
    m.setPhase('Evacuated');
    const text = await m.text();
    expect(text).toContain('drainer_node_phase{phase="Evacuated"} 1');
    expect(text).toContain('drainer_node_phase{phase="Evacuating"} 0');
    expect(text).toContain('drainer_node_phase{phase="InService"} 0');
  });

  it('lets two instances live in one process without clashing', async () => {
    const a = new Metrics();
    const b = new Metrics();
    a.apiRequest('nova', '200');
    expect(await b.text()).not.toContain('api="nova"');
  });
});
