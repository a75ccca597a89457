// Fleet tools' timeouts against drainer's own deadlines (src/core/capi/timeouts.ts).
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.ts';
import type { Plan } from '../../../src/core/backends/plugin.ts';
import {
  durationText,
  evacuationBound,
  goDurationSeconds,
  timeoutFindings,
} from '../../../src/core/capi/timeouts.ts';

const plan = (plugin: string, n: number): Plan => ({
  plugin,
  workloads: Array.from({ length: n }, (_, i) => ({ name: `vm-${i}`, action: 'live-migrate' }) as never),
});

describe('timeouts found before they fire', () => {
  it("reads Go's duration text as Kubernetes objects carry it, and nothing else", () => {
    expect(goDurationSeconds('1h30m')).toBe(5400);
    expect(goDurationSeconds('90s')).toBe(90);
    expect(goDurationSeconds('500ms')).toBe(0.5);
    expect(goDurationSeconds('0s')).toBe(0);
    expect(goDurationSeconds('10 minutes')).toBeUndefined();
    expect(goDurationSeconds(undefined)).toBeUndefined();
    expect(durationText(9000)).toBe('2h30m');
    expect(durationText(45)).toBe('45s');
  });

  it('bounds the evacuation by per-VM deadlines and the moves in flight', () => {
    const config = configSchema.parse({ nova: { maxConcurrentMigrations: 2, migrationTimeout: 600 } });
    expect(evacuationBound([plan('nova', 5), plan('kubevirt', 3)], config)).toEqual({
      seconds: 3 * 600 + 2 * 150,
      why: '5 nova VMs, 2 at a time, up to 10m each; 3 kubevirt VMs, 2 at a time, up to 2m30s each',
    });
    expect(evacuationBound([plan('nova', 0)], config)).toBeUndefined();
  });

  it('warns only of a timeout shorter than the bound, not of 0 (none), nor under drainer hook', () => {
    const bound = { seconds: 3600, why: 'x' };
    const t = { tool: 'Cluster API' as const, object: 'Machine f/m', field: 'nodeDrainTimeout' };
    expect(timeoutFindings(bound, [{ ...t, seconds: 600 }])).toHaveLength(1);
    expect(timeoutFindings(bound, [{ ...t, seconds: 0 }])).toEqual([]);
    expect(timeoutFindings(bound, [{ ...t, seconds: 7200 }])).toEqual([]);
    expect(timeoutFindings(bound, [{ ...t, seconds: 600, hooked: true }])).toEqual([]);
  });
});
