import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { loadScenarioFile, parseScenario, resolveScenario } from '../../src/sandbox/scenario-load.ts';

const issuesOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).issues.map((i) => `${i.path}: ${i.message}`);
  }
  throw new Error('expected a ConfigError');
};

describe('scenario', () => {
  it('ships a default scenario with the promised shape', async () => {
    const s = await resolveScenario(undefined);
    const pods =
      s.pods.length +
      s.replicasets.reduce((n, rs) => n + rs.replicas, 0) +
      s.daemonsets.length * s.nodes.length;
    expect(s.nodes.map((n) => n.name)).toEqual(['node-1', 'node-2', 'node-3', 'node-4']);
    expect(s.openstack.servers).toHaveLength(13);
    expect(new Set(s.openstack.servers.map((sv) => sv.project)).size).toBe(3);
    expect(new Set(s.openstack.servers.map((sv) => sv.host)).size).toBe(3);
    expect(s.openstack.servers.map((sv) => sv.state)).toEqual(expect.arrayContaining(['SHUTOFF', 'PAUSED']));
    expect(s.kubevirt.vmis).toHaveLength(6);
    expect(s.kubevirt.vmis.filter((v) => !v.migratable)).toHaveLength(1);
    expect(pods).toBe(30);
    expect(s.openstack.hosts[0]?.hypervisorHostname).toBe('node-1.cloud.example.org');
  });

  it('names the path of a bad field', () => {
    const issues = issuesOf(() =>
      parseScenario({ nodes: [{ name: 'n1', taints: [{ key: 'k', effect: 'Sometimes' }] }] }, 'bad.yaml'),
    );
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/^bad\.yaml: nodes\[0\]\.taints\[0\]\.effect: /);
  });

  it('names the path of a reference to an unknown node or host', () => {
    const issues = issuesOf(() =>
      parseScenario({
        nodes: [{ name: 'n1' }],
        pods: [{ name: 'p', node: 'n9' }],
        kubevirt: { vmis: [{ name: 'vm', node: 'n2' }] },
        openstack: { hosts: [{ name: 'h1' }], servers: [{ name: 's', project: 'p', host: 'h2' }] },
      }),
    );
    expect(issues).toEqual([
      'openstack.servers[0].host: unknown host "h2"',
      'kubevirt.vmis[0].node: unknown node "n2"',
      'pods[0].node: unknown node "n9"',
    ]);
  });

  it('rejects a PDB with both or neither of minAvailable and maxUnavailable', () => {
    const issues = issuesOf(() =>
      parseScenario({
        nodes: [{ name: 'n1' }],
        pdbs: [
          { name: 'a', selector: { app: 'a' }, minAvailable: 1, maxUnavailable: 1 },
          { name: 'b', selector: { app: 'b' } },
          { name: 'c', selector: { app: 'c' }, minAvailable: 'half' },
        ],
      }),
    );
    expect(issues).toEqual([
      expect.stringMatching(/^pdbs\[2\]\.minAvailable: /),
      'pdbs[0]: set exactly one of minAvailable and maxUnavailable',
      'pdbs[1]: set exactly one of minAvailable and maxUnavailable',
    ]);
  });

  it('rejects duplicate names and unknown keys', () => {
    expect(issuesOf(() => parseScenario({ nodes: [{ name: 'n1' }, { name: 'n1' }] }))).toEqual([
      'nodes[1].name: duplicate name "n1"',
    ]);
    expect(issuesOf(() => parseScenario({ nodes: [{ name: 'n1', colour: 'red' }] }))[0]).toMatch(
      /^nodes\[0\]/,
    );
  });

  it('reports unreadable and malformed files as ConfigErrors naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scenario-'));
    const file = join(dir, 'broken.yaml');
    await writeFile(file, 'nodes: [\n');
    await expect(loadScenarioFile(file)).rejects.toThrow(ConfigError);
    await expect(loadScenarioFile(join(dir, 'missing.yaml'))).rejects.toThrow(/missing\.yaml/);
  });
});
