// Story: the agent is killed (SIGKILL, a real daemon process) while its drain gate holds a running
// `kubectl drain`. Nothing releases the gate while the agent is gone; the restarted agent resumes
// the evacuation and releases the gate only once the last server has left.
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { gateName } from '../../src/kube/gate.ts';
import type { KubeObject, KubePod } from '../../src/kube/types.ts';
import { hasKubectl } from '../daemonset/kubectl.ts';
import { daemonFiles, spawnDaemon } from './daemon-run.ts';
import { heldDrain, migrationsStarted } from './held-drain.ts';
import { smallWorld } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';

const GATE = gateName('node-a');
const POD = `/api/v1/namespaces/drainer/pods/${GATE}`;
const PDB = `/apis/policy/v1/namespaces/drainer/poddisruptionbudgets/${GATE}`;

const run = hasKubectl || process.env.CI ? describe : describe.skip;

run('drain gate across a kill -9 of the agent (real daemon process, real kubectl)', () => {
  let stack: Stack | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children) c.kill('SIGKILL');
    await stack?.close();
  });

  it('stays held while the agent is dead; the restarted agent releases it after the last server left', async () => {
    const s = await startStack({ scenario: smallWorld({ servers: 12, migrationSeconds: 12 }) });
    stack = s;
    const { kubeconfig, configPath } = daemonFiles(s, 'node-a');
    const daemon = () => {
      // a container restarted in the same pod: the same instance takes its node Lease back at once
      const child = spawnDaemon(configPath, {
        NODE_NAME: 'node-a',
        POD_NAME: 'drainer-x7k2p',
        POD_UID: 'uid-1',
      });
      children.push(child);
      return child;
    };
    const os = s.sandbox.openstack.state;
    const gatePod = () => s.k.request<KubePod>({ path: POD }).catch(() => undefined);

    const first = daemon();
    await until('gate pod running', async () => (await gatePod())?.status?.phase === 'Running', 30_000);
    const drain = heldDrain(os, kubeconfig);
    await migrationsStarted(os, 2);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));

    // the agent is gone: the migrations Nova had run out, the rest stay; the drain keeps waiting
    await until(
      'no migration running',
      () =>
        os
          .migrations()
          .every((m) => m.status === 'completed' || m.status === 'error' || m.status === 'failed'),
      30_000,
    );
    expect(os.serversOnHost('node-a').length).toBeGreaterThan(0);
    expect((await gatePod())?.metadata.deletionTimestamp).toBeUndefined();
    const pdb = await s.k.request<KubeObject>({ path: PDB });
    expect(pdb.status).toMatchObject({ disruptionsAllowed: 0 });
    expect(drain.returned()).toBe(0);

    daemon();
    const drained = await drain.done;
    expect(drained.code, drained.stderr).toBe(0);
    expect(os.serversOnHost('node-a')).toEqual([]);
    expect(drain.lastLeft()).toBeGreaterThan(0);
    expect(drain.returned()).toBeGreaterThanOrEqual(drain.lastLeft());
    for (const v of os.servers()) expect(os.migrateCalls(v.id), v.name).toBe(1);
  });
});
