// Story: a fleet tool drains a hypervisor node with the real kubectl. drainer's gate pod (its PDB
// allows no disruption) makes the drain wait until every Nova server has left the host; uncordon
// holds the gate again; an uninstalled drainer leaves nothing that blocks a drain.
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject, KubePod } from '../../src/kube/types.ts';
import { hasKubectl } from '../daemonset/kubectl.ts';
import { agentDaemonSet } from '../kube/agent-daemonset.ts';
import { DRAIN, GATE, gateAgent, PDB } from './gate-stack.ts';
import { lastLeft } from './held-drain.ts';
import { smallWorld } from './scenario.ts';
import { finished, startStack, until, type Stack } from './stack.ts';

/** Must run in CI (the runner installs kubectl); elsewhere the story is skipped without it. */
const run = hasKubectl || process.env.CI ? describe : describe.skip;

run('drain gate: kubectl drain waits for the VMs (full stack, real kubectl)', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());

  async function start(world = smallWorld(), overrides: Record<string, unknown> = {}) {
    const s = await startStack({ scenario: world });
    stack = s;
    const { agent, gatePod, drainer, kube } = await gateAgent(s, overrides);
    return { s, agent, gatePod, drainer, kube };
  }

  it('returns only after the last server and VMI have left the host (Nova migration records at that moment)', async () => {
    const { s, kube } = await start(
      smallWorld({
        extra: {
          kubevirt: {
            installed: true,
            namespace: 'kubevirt',
            migrationSeconds: 8,
            vmis: [{ name: 'vm-k', namespace: 'vms', node: 'node-a', evictionStrategy: 'LiveMigrate' }],
          },
        },
      }),
    );
    const vmiNode = () =>
      s.sandbox.kube.store.find('virtualmachineinstances.kubevirt.io', 'vms', 'vm-k')?.metadata.labels?.[
        'kubevirt.io/nodeName'
      ];
    expect(vmiNode()).toBe('node-a');
    const os = s.sandbox.openstack.state;
    const left = lastLeft(os);
    const drained = await kube(DRAIN);
    const returned = Date.now();
    const onHost = os.serversOnHost('node-a').map((v) => v.name);
    const vmiAt = vmiNode();
    const migrations = os.servers().map((v) => os.migrations(v.id).map((m) => m.status));
    left.off();

    expect(drained.code, drained.stderr).toBe(0);
    expect(onHost).toEqual([]);
    expect(vmiAt).toBe('node-b');
    for (const m of migrations) expect(m).toContain('completed');
    expect(left.at()).toBeGreaterThan(0);
    expect(returned).toBeGreaterThanOrEqual(left.at());
    // the drain was held by the gate, and said so
    expect(drained.stderr + drained.stdout).toMatch(
      new RegExp(`evict.*${GATE}|${GATE}.*disruption budget`, 's'),
    );
    expect((await s.record('node-a'))?.phase).toBe('Evacuated');
  });

  it('uncordon holds the gate again, before the node takes VMs', async () => {
    const { s, kube, gatePod } = await start(smallWorld({ servers: 1 }));
    expect((await kube(DRAIN)).code).toBe(0);
    expect(await gatePod()).toBeUndefined();
    expect((await kube(['uncordon', 'node-a'])).code).toBe(0);
    await until('restored', async () => (await s.record('node-a')) === undefined);
    const pod = await gatePod();
    expect(pod?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'PodDisruptionBudget',
      controller: true,
    });
    expect(s.sandbox.openstack.state.service('node-a')).toMatchObject({ status: 'enabled' });
    const pdb = await s.k.request<KubeObject>({ path: PDB });
    expect(pdb.spec).toMatchObject({ minAvailable: 1 });
  });

  it('a Failed evacuation keeps the drain waiting until drainer release', async () => {
    const { s, kube, drainer, gatePod } = await start(
      smallWorld({ servers: 2, faults: { failMigrations: ['vm-2'] } }),
    );
    let returned = false;
    const drain = kube(DRAIN).then((r) => {
      returned = true;
      return r;
    });
    const rec = await finished(s, 'node-a');
    expect(rec.phase).toBe('Failed');
    const pdb = await until('pdb status', async () => {
      const p = await s.k.request<KubeObject>({ path: PDB });
      return (p.status as { currentHealthy?: number } | undefined)?.currentHealthy === 1 ? p : undefined;
    });
    expect(pdb.status).toMatchObject({ disruptionsAllowed: 0 });
    // the pods went, the gate pod stays: kubectl is still retrying its eviction
    await until('pods drained but the gate', async () => {
      const pods = await s.k.request<{ items: KubePod[] }>({
        path: '/api/v1/pods',
        query: { fieldSelector: 'spec.nodeName=node-a' },
      });
      const left = pods.items.filter((p) => p.metadata.ownerReferences?.[0]?.kind !== 'DaemonSet');
      return left.length === 1 && left[0]?.metadata.name === GATE;
    });
    expect(returned).toBe(false);
    expect(s.sandbox.openstack.state.serversOnHost('node-a').map((v) => v.name)).toEqual(['vm-2']);

    // a VM is still there: refused (exit 3) until the operator says --force
    const refused = await drainer('release', '--node', 'node-a');
    expect(refused.code, refused.stderr).toBe(3);
    const released = await drainer('release', '--node', 'node-a', '--force');
    expect(released.code, released.stderr).toBe(0);
    expect(released.stdout).toContain(`drain gate drainer/${GATE} released (phase Failed)`);
    const drained = await drain;
    expect(drained.code, drained.stderr).toBe(0);
    expect((await s.node('node-a')).metadata.annotations?.['drainer.dev/gate-released']).toBeDefined();
    expect((await drainer('status', '-o', 'json')).stdout).toContain('released (drainer release)');

    // the release lasts until the restore: then the gate is held again and the mark is gone
    await s.cordon('node-a', false);
    await until('restored', async () => (await s.record('node-a')) === undefined);
    await until('gate held again', async () => (await gatePod())?.status?.phase === 'Running');
    expect((await s.node('node-a')).metadata.annotations?.['drainer.dev/gate-released']).toBeUndefined();
  });

  it('Evacuated with a server left (drain.requirePluginsSucceeded false) keeps the gate held', async () => {
    const { s, gatePod } = await start(smallWorld({ servers: 2, faults: { failMigrations: ['vm-2'] } }), {
      drain: { requirePluginsSucceeded: false },
    });
    await s.cordon('node-a');
    const rec = await finished(s, 'node-a');
    expect(rec.phase).toBe('Evacuated');
    expect(s.sandbox.openstack.state.serversOnHost('node-a').map((v) => v.name)).toEqual(['vm-2']);
    expect((await gatePod())?.metadata.deletionTimestamp).toBeUndefined();
    const held = await until('DrainGateHeld Event', async () => {
      const events = await s.k.request<{ items: { reason: string; message: string }[] }>({
        path: '/api/v1/namespaces/default/events',
      });
      return events.items.find((e) => e.reason === 'DrainGateHeld' && e.message.includes('not every'));
    });
    expect(held.message).toContain('requirePluginsSucceeded');
  });

  it('drainer release of a node in service is refused, naming the PDB to delete instead', async () => {
    const { drainer } = await start(smallWorld({ servers: 0 }));
    const r = await drainer('release', '--node', 'node-a');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`is in service`);
    expect(r.stderr).toContain(`PodDisruptionBudget drainer/${GATE}`);
  });

  it('the karpenter.sh/disrupted taint evacuates the node (gate released); its removal restores it (gate held)', async () => {
    const { s, gatePod } = await start(smallWorld({ servers: 2 }));
    const taints = (list: object[]) =>
      s.k.request({
        method: 'PATCH',
        path: '/api/v1/nodes/node-a',
        contentType: 'application/merge-patch+json',
        body: { spec: { taints: list } },
      });
    await taints([{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }]);
    const rec = await finished(s, 'node-a');
    expect(rec).toMatchObject({ phase: 'Evacuated', trigger: 'taint/karpenter.sh/disrupted' });
    expect(s.sandbox.openstack.state.serversOnHost('node-a')).toEqual([]);
    await until('gate released', async () => (await gatePod()) === undefined);
    expect((await s.node('node-a')).spec?.unschedulable).toBeFalsy();

    // Karpenter takes its taint back (the disruption was cancelled): drainer's own taint stays
    // until the restore removes it, and never counts as a trigger
    const own = ((await s.node('node-a')).spec?.taints ?? []).filter(
      (t) => t.key !== 'karpenter.sh/disrupted',
    );
    await taints(own);
    await until('restored', async () => (await s.record('node-a')) === undefined);
    expect(s.sandbox.openstack.state.service('node-a')).toMatchObject({ status: 'enabled' });
    expect((await gatePod())?.metadata.name).toBe(GATE);
  });

  it('after Evacuated: a server forced onto the host is found at the next resync and moved, the gate held while it is there', async () => {
    const { s, gatePod } = await start(smallWorld({ servers: 1 }), { resyncInterval: 1 });
    const os = s.sandbox.openstack.state;
    await s.cordon('node-a');
    expect((await finished(s, 'node-a')).phase).toBe('Evacuated');
    await until('gate released', async () => (await gatePod()) === undefined);

    // held at the moment the stray server leaves the host (read from the API server's store)
    let heldWhenItLeft: boolean | undefined;
    const stray = os.addServer({ name: 'forced', projectId: 'alpha', host: 'node-a' });
    const unsubscribe = os.subscribe((e) => {
      if (
        heldWhenItLeft === undefined &&
        e.kind === 'server' &&
        e.server.id === stray.id &&
        e.server.host !== 'node-a'
      )
        heldWhenItLeft = s.sandbox.kube.store.find('pods', 'drainer', GATE) !== undefined;
    });
    await until('stray moved', () => os.server(stray.id)?.host !== 'node-a', 20_000);
    unsubscribe();
    expect(heldWhenItLeft).toBe(true);
    expect(os.migrateCalls(stray.id)).toBe(1);
    const rec = await finished(s, 'node-a');
    expect(rec.phase).toBe('Evacuated');
    await until('gate released again', async () => (await gatePod()) === undefined);
  });

  it('a node with no VMs drains with at most one kubectl retry of the gate', async () => {
    const { s, kube } = await start(smallWorld({ servers: 0 }));
    const drained = await kube(DRAIN);
    expect(drained.code, drained.stderr).toBe(0);
    const retries = (drained.stdout + drained.stderr)
      .split('\n')
      .filter((l) => l.includes(GATE) && /will retry/.test(l));
    expect(retries.length).toBeLessThanOrEqual(1);
    expect((await s.record('node-a'))?.phase).toBe('Evacuated');
  });

  it('an agent with drainGate.enabled false removes the gate pod an earlier agent left', async () => {
    const { s, agent, gatePod, kube } = await start(smallWorld({ servers: 0 }));
    await agent.stop();
    const next = s.startAgent('node-a', { drainGate: { enabled: false } });
    await until('agent ready', () => next.agent.ready().ready);
    await until('gate pod removed', async () => (await gatePod()) === undefined);
    const drained = await kube(DRAIN);
    expect(drained.code, drained.stderr).toBe(0);
    expect(drained.stdout + drained.stderr).not.toMatch(/will retry/);
  });

  it('uninstalled outside an evacuation (DaemonSet deleted, agent stopped): nothing is left that blocks a drain', async () => {
    const { s, agent, gatePod, kube } = await start(smallWorld({ servers: 0 }));
    await s.k.request({
      method: 'POST',
      path: '/apis/apps/v1/namespaces/drainer/daemonsets',
      body: agentDaemonSet(),
    });
    // the agent that reads the DaemonSet at start owns its PDB by it
    await agent.stop();
    const next = s.startAgent('node-a');
    await until('agent ready', () => next.agent.ready().ready);
    await until('gate pod running', async () => (await gatePod())?.status?.phase === 'Running');
    await s.k.request({ method: 'DELETE', path: '/apis/apps/v1/namespaces/drainer/daemonsets/drainer' });
    await next.stop();
    // the stopping agent saw its DaemonSet gone: the gate pod's finalizer went with the pod
    expect(await gatePod()).toBeUndefined();
    await s.k.request({ method: 'DELETE', path: PDB });
    const drained = await kube(DRAIN);
    expect(drained.code, drained.stderr).toBe(0);
    expect(drained.stdout).toContain('node/node-a drained');
  });
});
