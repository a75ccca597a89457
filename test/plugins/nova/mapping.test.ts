import { describe, expect, it } from 'vitest';
import { HostMappingError } from '../../../src/errors.ts';
import { FakeNova } from './fake-nova.ts';
import { harness, offlineNock } from './helpers.ts';

// Mapping through the plugin's plan(), against the fake Nova: what operators will see.
let fake: FakeNova;
offlineNock();

function cloud(hosts: { host: string; hypervisor: string }[]) {
  fake = new FakeNova([]);
  for (const h of hosts) fake.addHost(h.host, h.hypervisor);
  fake.install();
}

const plan = (node: string, nova: Record<string, unknown> = {}) =>
  harness(fake, { nova }).plugin.plan({ name: node }, new AbortController().signal);

describe('node → nova-compute host', () => {
  it('uses the explicit mapping first', async () => {
    cloud([{ host: 'cmp-17', hypervisor: 'cmp-17.dc1' }]);
    expect((await plan('worker-3', { hostMapping: { 'worker-3': 'cmp-17' } })).location).toBe('cmp-17');
  });

  it('fails clearly when the explicit mapping names no service', async () => {
    cloud([{ host: 'cmp-17', hypervisor: 'cmp-17' }]);
    const err = await plan('worker-3', { hostMapping: { 'worker-3': 'cmp-99' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostMappingError);
    expect((err as HostMappingError).tried).toEqual([
      'nova.hostMapping["worker-3"] = "cmp-99": no nova-compute service on that host',
    ]);
  });

  it('matches the service host exactly', async () => {
    cloud([{ host: 'node-7', hypervisor: 'node-7.cluster.local' }]);
    expect((await plan('node-7')).location).toBe('node-7');
  });

  it('falls back to the short name of an FQDN node', async () => {
    cloud([{ host: 'node-7', hypervisor: 'node-7' }]);
    expect((await plan('node-7.example.com')).location).toBe('node-7');
  });

  it('falls back to the hypervisor hostname, filtered exactly, then uses its service host', async () => {
    // the pattern "node-1" also matches node-10 and node-11 on Nova's side
    cloud([
      { host: 'svc-a', hypervisor: 'node-1' },
      { host: 'svc-b', hypervisor: 'node-10' },
      { host: 'svc-c', hypervisor: 'node-11' },
    ]);
    expect((await plan('node-1')).location).toBe('svc-a');
  });

  it('finds an FQDN hypervisor (openstack-helm) from the short node name', async () => {
    cloud([
      { host: 'node-1.cloud.example.org', hypervisor: 'node-1.cloud.example.org' },
      { host: 'node-10.cloud.example.org', hypervisor: 'node-10.cloud.example.org' },
    ]);
    expect((await plan('node-1')).location).toBe('node-1.cloud.example.org');
  });

  it('prefers a hypervisor named exactly the node over one whose first label matches', async () => {
    cloud([
      { host: 'svc-fqdn', hypervisor: 'node-1.cloud.example.org' },
      { host: 'svc-exact', hypervisor: 'node-1' },
    ]);
    expect((await plan('node-1')).location).toBe('svc-exact');
  });

  it('reports ambiguity when one hypervisor hostname belongs to two services', async () => {
    cloud([
      { host: 'svc-a', hypervisor: 'node-1' },
      { host: 'svc-b', hypervisor: 'node-1' },
    ]);
    const err = await plan('node-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostMappingError);
    expect((err as Error).message).toMatch(/ambiguous.*services on svc-a, svc-b/);
  });

  it('lists every step it tried when nothing matches', async () => {
    cloud([{ host: 'svc-a', hypervisor: 'node-10' }]);
    const err = (await plan('node-1.dc1').catch((e: unknown) => e)) as HostMappingError;
    expect(err).toBeInstanceOf(HostMappingError);
    expect(err.tried).toEqual([
      'nova.hostMapping: no entry',
      'service host "node-1.dc1": none',
      'service host "node-1": none',
      'hypervisor_hostname "node-1.dc1" or "node-1.dc1.<domain>": none',
    ]);
  });
});
