// The record's per-plugin progress (what `drainer status` shows): counted from the plugins'
// reports and written only when a count changes.
import { describe, expect, it } from 'vitest';
import type { WorkloadProgress } from '../../src/core/backends/plugin.ts';
import { countProgress, ProgressRecord } from '../../src/core/record/progress-record.ts';
import { newRecord, NodeRecordStore, parseRecord } from '../../src/core/record/record.ts';
import { quietLogger } from './fakes.ts';

const w = (id: string, state: WorkloadProgress['state']): WorkloadProgress => ({
  id,
  name: id,
  state,
  action: 'live-migrate',
  attempts: 1,
});

describe('progress in the record', () => {
  it('counts moved, failed (blocked too) and the total, leaving skipped workloads out', () => {
    expect(
      countProgress([
        w('a', 'succeeded'),
        w('b', 'migrating'),
        w('c', 'failed'),
        w('d', 'blocked'),
        w('e', 'skipped'),
      ]),
    ).toEqual({ moved: 1, total: 4, failed: 2, onHost: 4, stopped: 0 });
  });

  it('counts the VMs still on the host apart from what moves: a stopped one left there counts, a deleted one does not', () => {
    expect(
      countProgress([
        w('moved', 'succeeded'),
        { ...w('left-stopped', 'skipped'), presence: 'stopped' },
        { ...w('deleted', 'skipped'), presence: 'gone' },
        { ...w('failed', 'failed'), presence: 'stopped' },
        w('moving', 'migrating'),
      ]),
    ).toEqual({ moved: 1, total: 3, failed: 1, onHost: 3, stopped: 2 });
  });

  it('writes the record when a count changes and never for a repeated report', async () => {
    const written: string[] = [];
    const store = new NodeRecordStore({
      record: newRecord('cordon', new Date('2026-01-01T00:00:00Z')),
      persist: async (v) => void written.push(v ?? ''),
    });
    const progress = new ProgressRecord(store, quietLogger());
    progress.report('nova', [w('a', 'pending'), w('b', 'pending')]);
    progress.report('nova', [w('a', 'migrating'), w('b', 'pending')]); // same counts
    progress.report('kubevirt', [w('v', 'migrating')]);
    progress.report('nova', [w('a', 'succeeded'), w('b', 'migrating')]);
    progress.report('nova', [w('a', 'succeeded'), w('b', 'migrating')]);
    await store.update({}); // waits for the writes before it
    expect(written).toHaveLength(4);
    // three changes and the update above; each write carries the newest record
    expect(parseRecord(written[3])?.progress).toEqual(store.current?.progress);
    expect(store.current?.progress).toEqual({
      nova: { moved: 1, total: 2, failed: 0, onHost: 1, stopped: 0 },
      kubevirt: { moved: 0, total: 1, failed: 0, onHost: 1, stopped: 0 },
    });
  });

  it('does nothing once the record is gone (restored)', async () => {
    const written: (string | null)[] = [];
    const store = new NodeRecordStore({ persist: async (v) => void written.push(v) });
    new ProgressRecord(store, quietLogger()).report('nova', [w('a', 'succeeded')]);
    expect(written).toEqual([]);
  });
});
