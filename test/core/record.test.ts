import { describe, expect, it } from 'vitest';
import {
  newRecord,
  NodeRecordStore,
  parseRecord,
  QUEUED_LABEL,
  queuedLabel,
  serializeRecord,
} from '../../src/core/record/record.ts';

describe('node record', () => {
  it('reads back what it wrote', () => {
    const rec = {
      ...newRecord('NodeMaintenance/nm-1', new Date('2024-05-01T00:00:00Z')),
      cordonedByUs: true,
    };
    expect(parseRecord(serializeRecord(rec))).toEqual({ ...rec, schemaVersion: 1 });
  });

  it('treats an absent or empty annotation as in service', () => {
    expect(parseRecord(undefined)).toBeUndefined();
    expect(parseRecord('')).toBeUndefined();
  });

  it('turns unreadable JSON into a Failed record that names the problem, never a crash', () => {
    const rec = parseRecord('{"phase":', new Date('2024-05-01T00:00:00Z'));
    expect(rec).toMatchObject({ phase: 'Failed', cordonedByUs: false, taintedByUs: false, plugins: {} });
    expect(rec?.lastError).toMatch(/unreadable drainer\.dev\/state annotation: not JSON/);
  });

  it('turns a record with an unknown phase into a Failed record naming the field', () => {
    const rec = parseRecord(JSON.stringify({ phase: 'Dancing', trigger: 'cordon', since: 'x' }));
    expect(rec?.phase).toBe('Failed');
    expect(rec?.lastError).toContain('phase');
  });

  it('fills fields an older writer left out with safe defaults', () => {
    const rec = parseRecord(
      JSON.stringify({ phase: 'Evacuated', trigger: 'cordon', since: '2024-05-01T00:00:00Z' }),
    );
    expect(rec).toMatchObject({ cordonedByUs: false, taintedByUs: false, plugins: {} });
  });
});

describe('NodeRecordStore', () => {
  it('writes every plugin save with the whole record, in order, even when saves overlap', async () => {
    const written: (string | null)[] = [];
    let release!: () => void;
    const firstWrite = new Promise<void>((r) => (release = r));
    const store = new NodeRecordStore({
      record: newRecord('cordon', new Date(0)),
      persist: async (v) => {
        if (written.length === 0) {
          written.push(v);
          await firstWrite;
          return;
        }
        written.push(v);
      },
    });

    const a = store.save('nova', { step: 1 });
    const b = store.save('kubevirt', { step: 2 });
    release();
    await Promise.all([a, b]);

    const last = parseRecord(written.at(-1) ?? undefined);
    expect(last?.plugins).toEqual({ nova: { step: 1 }, kubevirt: { step: 2 } });
    expect(store.get('nova')).toEqual({ step: 1 });
  });

  it('keeps writing after a failed write, and reports the failure to its caller', async () => {
    let fail = true;
    const store = new NodeRecordStore({
      record: newRecord('cordon', new Date(0)),
      persist: async () => {
        if (fail) throw new Error('503');
      },
    });
    await expect(store.update({ taintedByUs: true })).rejects.toThrow('503');
    fail = false;
    await expect(store.update({ cordonedByUs: true })).resolves.toBeUndefined();
  });

  it('clears the annotation by writing null', async () => {
    const written: (string | null)[] = [];
    const store = new NodeRecordStore({
      record: newRecord('cordon', new Date(0)),
      persist: async (v) => void written.push(v),
    });
    await store.clear();
    expect(written).toEqual([null]);
    expect(store.current).toBeUndefined();
  });

  it('refuses a plugin save when no evacuation is recorded', async () => {
    const store = new NodeRecordStore({ persist: async () => undefined });
    await expect(store.save('nova', {})).rejects.toThrow(/no node record/);
  });

  it('puts the fleet queue label on and off in the record writes themselves, never a write of its own', async () => {
    const writes: { phase?: string; labels?: Record<string, string | null> }[] = [];
    const queuedAt = '2024-05-01T10:00:00.000Z';
    const store = new NodeRecordStore({
      persist: async (v, labels) =>
        void writes.push({ ...(v ? { phase: parseRecord(v)?.phase } : {}), ...(labels ? { labels } : {}) }),
    });

    // cordoned with a budget: recorded Queued, the label (when it first queued, epoch ms) in the same write
    await store.set({ ...newRecord('cordon', new Date(queuedAt)), phase: 'Queued', queuedAt });
    // a second write while Queued leaves the label alone
    await store.update({ trigger: 'cordon' });
    // took a slot: Evacuating, and the label comes off with it
    await store.update({ phase: 'Evacuating', slot: 'drainer-evacuation-0' });
    await store.save('nova', { step: 1 });

    expect(writes).toEqual([
      { phase: 'Queued', labels: { [QUEUED_LABEL]: String(Date.parse(queuedAt)) } },
      { phase: 'Queued' },
      { phase: 'Evacuating', labels: { [QUEUED_LABEL]: null } },
      { phase: 'Evacuating' },
    ]);
  });

  it("labels the queue with the API server's time the record holds; a record an older version wrote, with its queuedAt", () => {
    const queuedAt = '2024-05-01T10:00:30.000Z'; // the agent's clock, 30 s ahead
    const queued = { ...newRecord('cordon', new Date(queuedAt)), phase: 'Queued' as const, queuedAt };
    const server = Date.parse('2024-05-01T10:00:00.250Z');

    expect(queuedLabel({ ...queued, queueStamp: server })).toBe(String(server));
    expect(queuedLabel(queued)).toBe(String(Date.parse(queuedAt)));
    expect(queuedLabel({ ...queued, phase: 'Evacuating', queueStamp: server })).toBeNull();
  });

  it('states the label in its first write, so a label an earlier agent left never outlives the record', async () => {
    const labels: (Record<string, string | null> | undefined)[] = [];
    const store = new NodeRecordStore({
      record: newRecord('cordon', new Date(0)),
      persist: async (_v, l) => void labels.push(l),
    });
    await store.update({ taintedByUs: true });
    await store.clear();
    expect(labels).toEqual([{ [QUEUED_LABEL]: null }, undefined]);
  });

  it('states the label again after a failed write', async () => {
    let fail = true;
    const labels: (Record<string, string | null> | undefined)[] = [];
    const store = new NodeRecordStore({
      record: { ...newRecord('cordon', new Date(0)), phase: 'Queued', queuedAt: new Date(5).toISOString() },
      persist: async (_v, l) => {
        labels.push(l);
        if (fail) throw new Error('503');
      },
    });
    await expect(store.update({ trigger: 'cordon' })).rejects.toThrow('503');
    fail = false;
    await store.update({ trigger: 'cordon' });
    expect(labels).toEqual([{ [QUEUED_LABEL]: '5' }, { [QUEUED_LABEL]: '5' }]);
  });
});

describe('queuedLabel', () => {
  it('is the queuedAt in epoch ms while Queued, and no label in any other phase', () => {
    const queued = {
      ...newRecord('cordon', new Date(0)),
      phase: 'Queued' as const,
      queuedAt: new Date(42).toISOString(),
    };
    expect(queuedLabel(queued)).toBe('42');
    expect(queuedLabel({ ...queued, phase: 'Evacuating' })).toBeNull();
    expect(queuedLabel(undefined)).toBeNull();
  });
});
