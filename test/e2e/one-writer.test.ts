// Stories of issue 23 items 4 and 5 on the full stack: a downgrade leaves a record the old agent
// cannot read; a second agent for one node waits; a DaemonSet rollout overlaps the old and the new
// agent during an evacuation; run-once and restore next to a running daemon refuse.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { STATE_ANNOTATION } from '../../src/core/record/record.ts';
import type { KubeLease } from '../../src/kube/lease.ts';
import type { KubeList } from '../../src/kube/types.ts';
import { UNREADABLE_ANNOTATION } from '../../src/names.ts';
import { cli } from '../cli/harness.ts';
import { smallWorld } from './scenario.ts';
import { startStack, until, type EventObject, type Stack } from './stack.ts';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/drainer/leases';
const MERGE = 'application/merge-patch+json';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const fast = { fleet: { agentLeaseDuration: 1 } };

async function events(s: Stack, node: string, reason?: string): Promise<EventObject[]> {
  const list = await s.k.request<KubeList<EventObject>>({ path: '/api/v1/namespaces/default/events' });
  return list.items.filter((e) => e.involvedObject.name === node && (!reason || e.reason === reason));
}

const holder = async (s: Stack, node: string) =>
  (await s.k.request<KubeLease>({ path: `${LEASES}/drainer-node-${node}` }).catch(() => undefined))?.spec
    ?.holderIdentity;

function cliFor(s: Stack) {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-writer-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, s.sandbox.kube.kubeconfig());
  const config = { ...s.sandbox.drainerConfig, kubeconfig, logLevel: 'warn', nova: { pollInterval: 0.05 } };
  return cli({ files: { 'config.yaml': yaml.dump(config) } });
}

describe('one writer per node (full stack)', () => {
  it('downgrade: a record of a newer version is left whole; restore --force re-enables nova-compute, no false success', async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 2 }), config: fast });
    const s = stack;
    const os = s.sandbox.openstack.state;
    // the newer version evacuated node-a and wrote a record this one cannot read
    const newer = s.startAgent('node-a');
    await s.cordon('node-a');
    await until('Evacuated', async () => (await s.record('node-a'))?.phase === 'Evacuated');
    await newer.stop();
    expect(os.service('node-a')?.status).toBe('disabled');
    const node = await s.node('node-a');
    const rec = JSON.parse(node.metadata.annotations?.[STATE_ANNOTATION] ?? '{}') as object;
    const future = JSON.stringify({ ...rec, phase: 'Verified', verifiedBy: 'drainer 9', schemaVersion: 1 });
    await s.k.request({
      method: 'PATCH',
      path: '/api/v1/nodes/node-a',
      contentType: MERGE,
      body: { metadata: { annotations: { [STATE_ANNOTATION]: future } } },
    });

    // the rolled-back agent starts, and the operator uncordons
    s.startAgent('node-a');
    await s.cordon('node-a', false);
    await until('RecordUnreadable', async () => (await events(s, 'node-a', 'RecordUnreadable')).length > 0);
    const [said] = await events(s, 'node-a', 'RecordUnreadable');
    expect(said?.message).toContain('drainer restore --node node-a --force');
    expect((await s.node('node-a')).metadata.annotations?.[STATE_ANNOTATION]).toBe(future);
    expect(os.service('node-a')?.status).toBe('disabled');
    expect(await events(s, 'node-a', 'RestoreSucceeded')).toEqual([]);

    // without --force restore refuses and names the way out; with it, what is ours is undone
    const run = cliFor(s);
    const refused = await run('restore', '--node', 'node-a');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--force/);
    const forced = await run('restore', '--node', 'node-a', '--force');
    expect(forced.code).toBe(0);
    expect(os.service('node-a')?.status).toBe('enabled');
    const after = await s.node('node-a');
    expect(after.metadata.annotations?.[STATE_ANNOTATION]).toBeUndefined();
    expect(after.metadata.annotations?.[UNREADABLE_ANNOTATION]).toBe(future);
    expect((after.spec?.taints ?? []).map((t) => t.key)).not.toContain('drainer.dev/evacuating');
    expect(await events(s, 'node-a', 'RestoreSucceeded')).toEqual([]);
    expect(await events(s, 'node-a', 'RestoreForced')).toHaveLength(1);
  }, 60_000);

  it('a second agent for the same node waits; run-once and restore next to it exit 2 naming the holder', async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 2 }), config: fast });
    const s = stack;
    const first = s.startAgent('node-a');
    await until('first holds node-a', async () => (await holder(s, 'node-a')) === first.instance);
    const second = s.startAgent('node-a');
    await until('second ready (it waits, but is ready)', () => second.agent.ready().ready);

    const refused = await cliFor(s)('run-once', '--node', 'node-a', '--cordon');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`held by agent ${first.instance}`);
    expect((await s.node('node-a')).spec?.unschedulable).toBeFalsy(); // refused before any change

    await s.cordon('node-a');
    // the fleet slot is given back (a record write) after the record says Evacuated
    await until('Evacuated, slot given back', async () => {
      const r = await s.record('node-a');
      return r?.phase === 'Evacuated' && r.slot === undefined;
    });
    expect(await holder(s, 'node-a')).toBe(first.instance);
    expect(s.logLines.some((l) => l.includes('another agent instance holds this node'))).toBe(true);

    // a manual restore next to the acting agent would race it: refused, naming it, nothing undone
    const os = s.sandbox.openstack.state;
    const before = (await s.node('node-a')).metadata.annotations?.[STATE_ANNOTATION];
    const noRestore = await cliFor(s)('restore', '--node', 'node-a');
    expect(noRestore.code).toBe(2);
    expect(noRestore.stderr).toContain(`held by agent ${first.instance}`);
    expect(noRestore.stderr).toContain('restore refuses (stop that agent, or pass --force)');
    expect(os.service('node-a')?.status).toBe('disabled');
    expect((await s.node('node-a')).metadata.annotations?.[STATE_ANNOTATION]).toBe(before);

    // with both agents stopped, the same restore undoes drainer's part, but the node is still cordoned
    // (a drain may run): nova-compute stays disabled until the node is back in service
    await second.stop();
    await first.stop();
    const restored = await cliFor(s)('restore', '--node', 'node-a');
    expect(restored.code, restored.stderr).toBe(0);
    expect((await s.node('node-a')).metadata.annotations?.[STATE_ANNOTATION]).toBeUndefined();
    expect(os.service('node-a')?.status).toBe('disabled');
    // uncordoned, the same command (no record now) gives the service back: it is recognisably drainer's
    await s.cordon('node-a', false);
    const again = await cliFor(s)('restore', '--node', 'node-a');
    expect(again.code, again.stderr).toBe(0);
    expect(os.service('node-a')?.status).toBe('enabled');
  }, 60_000);

  it('DaemonSet rollout: old and new agent overlap mid-evacuation; nothing migrates twice, the record is never lost, Evacuated once', async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 3 }), config: fast });
    const s = stack;
    const os = s.sandbox.openstack.state;
    const old = s.startAgent('node-a');
    await until('old holds node-a', async () => (await holder(s, 'node-a')) === old.instance);
    const watching = new AbortController();
    let seen = false;
    let lost = false;
    void (async () => {
      while (!watching.signal.aborted) {
        const r = await s.record('node-a').catch(() => 'error' as const);
        if (r !== 'error') {
          if (r) seen = true;
          else if (seen) lost = true;
        }
        await new Promise((t) => setTimeout(t, 10));
      }
    })();

    await s.cordon('node-a');
    await until('a migration under way', () => os.servers().some((v) => os.migrateCalls(v.id) > 0));
    const fresh = s.startAgent('node-a'); // the rollout's new pod, next to the old one
    await until('new pod ready', () => fresh.agent.ready().ready);
    expect(await holder(s, 'node-a')).toBe(old.instance);
    await old.stop(); // the old pod goes: its Lease is given back, its record stays

    await until('new pod holds node-a', async () => (await holder(s, 'node-a')) === fresh.instance);
    await until('Evacuated', async () => (await s.record('node-a'))?.phase === 'Evacuated', 20_000);
    watching.abort();

    for (const v of os.servers()) expect(os.migrateCalls(v.id), v.name).toBe(1);
    expect(os.serversOnHost('node-a')).toEqual([]);
    expect(lost).toBe(false);
    const done = await events(s, 'node-a', 'EvacuationSucceeded');
    expect(done.map((e) => e.count ?? 1)).toEqual([1]);
  }, 60_000);
});
