// Story: an operator's `drainer release` belongs to the maintenance it was given in. The soak's
// tracker sees each maintenance as the API server shows it (a record appears, goes, or its Node is
// registered again), so a release excuses that maintenance's drains and no later one's.
import { describe, expect, it } from 'vitest';
import { Maintenances, type MaintenanceSource } from '../../bench/chaos/maintenances.ts';
import { STATE_ANNOTATION } from '../../src/core/record/record.ts';

/** A fake API server: Node changes pushed by hand, on a clock set by hand. */
function cluster() {
  let cb: Parameters<MaintenanceSource['subscribe']>[1] = () => undefined;
  let now = 1000;
  const source: MaintenanceSource = {
    subscribe: (_res, f) => ((cb = f), () => undefined),
    now: () => now,
  };
  const node = (name: string, uid: string, record: boolean, phase: string) => {
    const annotations: Record<string, string> = record
      ? { [STATE_ANNOTATION]: JSON.stringify({ phase }) }
      : {};
    return { metadata: { name, uid, annotations } };
  };
  return {
    m: new Maintenances(source),
    at: (t: number) => (now = t),
    seen: (name: string, record: boolean, uid = `${name}-uid`, phase = 'Evacuating') =>
      cb('MODIFIED', node(name, uid, record, phase)),
    deleted: (name: string, uid = `${name}-uid`) => cb('DELETED', node(name, uid, false, '')),
  };
}

describe('maintenances as the soak tracks them', () => {
  it('a release counts for the maintenance it was given in, until that one ends', () => {
    const c = cluster();
    c.seen('hv-1', true);
    const first = c.m.current('hv-1');
    expect(first).toBeDefined();
    c.at(1500);
    c.m.released('hv-1', 1400, first);
    expect(c.m.releasedNow('hv-1')).toBe(true);

    c.at(2000);
    c.seen('hv-1', false); // restored
    expect(c.m.current('hv-1')).toBeUndefined();
    expect(c.m.ends('hv-1')).toBe(1);
    expect(c.m.releases).toEqual([{ node: 'hv-1', from: 1400, until: 2000 }]);

    // weeks later, cordoned again: the old release excuses nothing of this one
    c.at(9000);
    c.seen('hv-1', true);
    expect(c.m.current('hv-1')).not.toBe(first);
    expect(c.m.releasedNow('hv-1')).toBe(false);
  });

  it('a release that lands after its maintenance ended counts for nothing', () => {
    const c = cluster();
    c.seen('hv-1', true);
    const first = c.m.current('hv-1');
    c.seen('hv-1', false);
    c.seen('hv-1', true);
    c.m.released('hv-1', 1000, first);
    expect(c.m.releases).toEqual([]);
    expect(c.m.releasedNow('hv-1')).toBe(false);
  });

  it('a Node deleted or registered again ends its maintenance, though the new one has a record at once', () => {
    const c = cluster();
    c.seen('hv-2', true);
    const before = c.m.current('hv-2');
    c.seen('hv-2', true, 'another-uid');
    expect(c.m.ends('hv-2')).toBe(1);
    expect(c.m.current('hv-2')).not.toBe(before);
    c.deleted('hv-2', 'another-uid');
    expect(c.m.current('hv-2')).toBeUndefined();
    expect(c.m.ends('hv-2')).toBe(2);
    expect(c.m.count).toBe(2);
  });

  it('keeps nodes whose names share a prefix apart', () => {
    const c = cluster();
    c.seen('hv-1', true);
    c.seen('hv-1-b', false);
    expect(c.m.current('hv-1')).toBeDefined();
    expect(c.m.current('hv-1-b')).toBeUndefined();
  });

  it('a node is given back from the moment its restore begins, before its record goes', () => {
    // an uncordon: drainer starts again what it stopped while the record still says Restoring
    const c = cluster();
    c.seen('hv-3', true);
    const before = c.m.givenBack('hv-3');
    c.seen('hv-3', true, undefined, 'Restoring');
    c.seen('hv-3', true, undefined, 'Restoring'); // the restore's later writes: once
    expect(c.m.givenBack('hv-3')).toBe(before + 1);
    expect(c.m.current('hv-3')).toBeDefined();
    c.seen('hv-3', false);
    expect(c.m.givenBack('hv-3')).toBe(before + 2);
  });
});
