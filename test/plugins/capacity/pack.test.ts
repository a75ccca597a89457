import { describe, expect, it } from 'vitest';
import { pack, type Bin, type Item } from '../../../src/plugins/capacity/pack.ts';
import { verdictOf } from '../../../src/plugins/capacity/verdict.ts';

const vm = (name: string, vcpu: number, ramGb: number, extra: Partial<Item> = {}): Item => ({
  id: name,
  name,
  needs: { VCPU: vcpu, MEMORY_MB: ramGb * 1024 },
  ...extra,
});
const host = (name: string, vcpu: number, ramGb: number, extra: Partial<Bin> = {}): Bin => ({
  name,
  free: { VCPU: vcpu, MEMORY_MB: ramGb * 1024 },
  ...extra,
});

interface Case {
  name: string;
  items: Item[];
  bins: Bin[];
  /** item → bin it lands on, or the reason it lands nowhere */
  expect: Record<string, string>;
}

const cases: Case[] = [
  {
    name: 'first-fit-decreasing places the biggest first, so the big one is not crowded out',
    // in the given order (small first) the small ones would fill host-a and big would fit nowhere
    items: [vm('small-1', 2, 4), vm('small-2', 2, 4), vm('big', 8, 32)],
    bins: [host('host-a', 8, 32), host('host-b', 4, 8)],
    expect: { big: 'host-a', 'small-1': 'host-b', 'small-2': 'host-b' },
  },
  {
    name: 'a class no host has enough of is named',
    items: [vm('db-7', 16, 64), vm('web', 2, 4)],
    bins: [host('host-a', 32, 48), host('host-b', 8, 16)],
    expect: { 'db-7': 'room:MEMORY_MB', web: 'host-a' },
  },
  {
    name: 'max_unit: a host with room still cannot take more than max_unit for one workload',
    items: [vm('wide', 24, 8)],
    bins: [host('host-a', 64, 256, { maxUnit: { VCPU: 16 } })],
    expect: { wide: 'max-unit:VCPU' },
  },
  {
    name: 'an availability zone pins a server to the hosts of that zone',
    items: [vm('pinned', 2, 4, { zone: 'az-2' }), vm('free', 2, 4)],
    bins: [host('host-a', 64, 256, { zone: 'az-1' }), host('host-b', 2, 4, { zone: 'az-2' })],
    expect: { pinned: 'host-b', free: 'host-a' },
  },
  {
    name: 'a zone without another host',
    items: [vm('pinned', 2, 4, { zone: 'az-3' })],
    bins: [host('host-a', 64, 256, { zone: 'az-1' })],
    expect: { pinned: 'zone' },
  },
  {
    name: 'anti-affinity: one member per host, even where two would fit',
    items: [vm('db-1', 2, 4, { antiAffinity: 'g' }), vm('db-2', 2, 4, { antiAffinity: 'g' })],
    bins: [host('host-a', 64, 256), host('host-b', 4, 8)],
    expect: { 'db-1': 'host-a', 'db-2': 'host-b' },
  },
  {
    name: 'anti-affinity: a host that already holds a member takes none',
    items: [vm('db-1', 2, 4, { antiAffinity: 'g' }), vm('db-2', 2, 4, { antiAffinity: 'g' })],
    bins: [host('host-a', 64, 256), host('host-b', 64, 256, { groups: ['g'] })],
    expect: { 'db-1': 'host-a', 'db-2': 'anti-affinity' },
  },
  {
    name: 'boot-from-volume: no DISK_GB needed, so a host without disk takes it',
    items: [
      { id: 'bfv', name: 'bfv', needs: { VCPU: 2, MEMORY_MB: 4096, DISK_GB: 0 } },
      { id: 'local', name: 'local', needs: { VCPU: 2, MEMORY_MB: 4096, DISK_GB: 40 } },
    ],
    bins: [{ name: 'host-a', free: { VCPU: 64, MEMORY_MB: 65536, DISK_GB: 10 } }],
    expect: { bfv: 'host-a', local: 'room:DISK_GB' },
  },
  {
    name: 'a filter (taints, nodeSelector) that excludes every host',
    items: [vm('gpu', 2, 4, { allowed: (b) => b.name === 'gpu-host' })],
    bins: [host('host-a', 64, 256)],
    expect: { gpu: 'excluded' },
  },
  {
    name: 'no other host at all',
    items: [vm('alone', 1, 1)],
    bins: [],
    expect: { alone: 'no-host' },
  },
];

describe('pack', () => {
  it.each(cases)('$name', ({ items, bins, expect: want }) => {
    const result = pack(items, bins);
    const got: Record<string, string> = {};
    for (const p of result.placed) got[p.item.name] = p.bin;
    for (const u of result.unplaced) {
      const detail = u.why === 'room' || u.why === 'max-unit' ? `:${u.classes.join(',')}` : '';
      got[u.item.name] = `${u.why}${detail}`;
    }
    expect(got).toEqual(want);
  });

  it('adds up what is short in total beyond every host’s remaining room', () => {
    const result = pack([vm('a', 4, 40), vm('b', 4, 40)], [host('h1', 8, 48), host('h2', 8, 8)]);
    // a lands on h1 (8 GiB left there, 8 on h2): b's 40 GiB minus the 16 left
    expect(result.shortInTotal).toEqual({ MEMORY_MB: 24 * 1024 });
  });
});

describe('verdictOf', () => {
  const describeNova = (cls: string, n: number) =>
    cls === 'VCPU' ? `${n} vCPU` : cls === 'MEMORY_MB' ? `${n / 1024} GiB RAM` : `${n} GB disk`;

  it('names the server, its size, the most one other host has free, and the total shortfall', () => {
    const packing = pack(
      [vm('db-7', 16, 64), vm('web-1', 2, 8), vm('web-2', 2, 8)],
      [host('host-a', 8, 32), host('host-b', 8, 8)],
    );
    const v = verdictOf({ plugin: 'nova', noun: 'server', packing, hosts: 2, describe: describeNova });
    expect(v).toEqual({
      status: 'short',
      message:
        'nova: 1 of 3 servers does not fit: db-7 (16 vCPU, 64 GiB RAM): the largest room on one other host is 8 vCPU, 32 GiB RAM; 4 vCPU, 40 GiB RAM short in total',
    });
  });

  it('says everything fits, and on how many hosts', () => {
    const packing = pack([vm('web-1', 2, 8)], [host('host-a', 8, 32)]);
    expect(verdictOf({ plugin: 'nova', noun: 'server', packing, hosts: 1, describe: describeNova })).toEqual({
      status: 'fits',
      message: 'nova: the 1 server fits on 1 other host',
    });
  });
});
