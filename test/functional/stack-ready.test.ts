// openstack:up's readiness check (test/functional/stack/ready.py), fed snapshots of the stack instead of its
// APIs (no cloud needed): up.sh says "up" only once a boot on either host can succeed.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const READY = new URL('./stack/ready.py', import.meta.url).pathname;
const SINCE = Date.parse('2026-11-28T12:00:00Z') / 1000; // when this up began

/** What ready.py says is still missing for this snapshot, one line each. */
function missing(snapshot: unknown): string[] {
  const out = execFileSync(PYTHON, [READY, '--check'], {
    input: JSON.stringify(snapshot),
    env: { COMPUTE_HOSTS: 'compute-a compute-b', SINCE: String(SINCE) },
    encoding: 'utf8',
  });
  return out.split('\n').filter(Boolean);
}

const beat = '2026-11-28T12:01:10.000000'; // a heartbeat after SINCE
const service = (binary: string, host: string, over: Record<string, unknown> = {}) => ({
  binary,
  host,
  state: 'up',
  status: 'enabled',
  updated_at: beat,
  disabled_reason: null,
  ...over,
});
const provider = { inventory: ['VCPU', 'MEMORY_MB', 'DISK_GB'], traits: ['COMPUTE_NODE'] };
const ready = {
  services: [
    service('nova-conductor', 'vm'),
    service('nova-scheduler', 'vm'),
    service('nova-compute', 'compute-a'),
    service('nova-compute', 'compute-b'),
  ],
  providers: { 'compute-a': provider, 'compute-b': provider },
  mapped: ['compute-a', 'compute-b'],
  flavor: true,
  image: 'active',
};

describe("openstack:up's readiness", () => {
  it('is ready when every service beats, both hosts are in Placement and mapped, and the image is active', () => {
    expect(missing(ready)).toEqual([]);
  });

  it('is not ready while a nova-compute is "up" from its new record but has made no provider and no heartbeat', () => {
    const starting = {
      ...ready,
      services: [
        ...ready.services.filter((s) => s.host !== 'compute-b'),
        service('nova-compute', 'compute-b', { updated_at: null }),
      ],
      providers: { 'compute-a': provider },
      mapped: ['compute-a'],
    };

    expect(missing(starting)).toEqual([
      'nova-compute on compute-b: no heartbeat since this up began (its RPC server is not running yet)',
      'compute-b: no compute node resource provider in Placement',
      'compute-b: not mapped to a cell (discover_hosts)',
    ]);
  });

  it('does not take a heartbeat from before this up (a reused state) for a running scheduler', () => {
    const reused = {
      ...ready,
      services: ready.services.map((s) =>
        s.binary === 'nova-scheduler' ? { ...s, updated_at: '2026-11-28T11:40:00' } : s,
      ),
    };

    expect(missing(reused)).toEqual([
      'nova-scheduler: no heartbeat since this up began (its RPC server is not running yet)',
    ]);
  });

  it('names a provider without inventory or still marked disabled, a disabled service, and a missing image', () => {
    const lagging = {
      ...ready,
      services: ready.services.map((s) =>
        s.host === 'compute-b' ? { ...s, status: 'disabled', disabled_reason: 'bench' } : s,
      ),
      providers: {
        'compute-a': { inventory: ['VCPU'], traits: ['COMPUTE_NODE', 'COMPUTE_STATUS_DISABLED'] },
        'compute-b': provider,
      },
      image: 'queued',
    };

    expect(missing(lagging)).toEqual([
      'nova-compute on compute-b: disabled (bench)',
      'compute-a: no MEMORY_MB, DISK_GB inventory in Placement',
      'compute-a: Placement marks it COMPUTE_STATUS_DISABLED',
      'image drainer-guest: queued',
    ]);
  });
});
