// `drainer status` against the sandbox API server: records in every phase show in the table, JSON
// and YAML; queue places follow the drainer.dev/queued label (oldest first, then name); --watch
// redraws when a record changes.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { microTime } from '../../src/core/fleet/budget.ts';
import { STATE_ANNOTATION } from '../../src/core/record/record.ts';
import { setAnnotation } from '../../src/kube/node.ts';
import { gateName, gatePdb, gatePod, pdbsPath, podsPath } from '../../src/kube/gate.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { node, startFixture, type KubeFixture } from '../kube/sandbox.ts';
import { Capture, cli } from './harness.ts';

const T0 = Date.parse('2026-03-01T12:00:00Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

const record = (fields: Record<string, unknown>) =>
  JSON.stringify({ trigger: 'cordon', since: iso(0), plugins: {}, ...fields });

/** A Node with a record made of `fields`; queuedMs also sets the queue label. */
const withRecord = (name: string, fields: Record<string, unknown>, queuedMs?: number) =>
  node(name, {
    metadata: {
      name,
      ...(queuedMs === undefined ? {} : { labels: { 'drainer.dev/queued': String(T0 + queuedMs) } }),
      annotations: {
        [STATE_ANNOTATION]: record({
          ...fields,
          ...(queuedMs === undefined ? {} : { queuedAt: iso(queuedMs) }),
        }),
      },
    },
  });

/** The node Lease an agent holds (`drainer status`'s AGENT column). */
const lease = (nodeName: string, renewTime: string) => ({
  metadata: {
    name: `drainer-node-${nodeName}`,
    namespace: 'drainer',
    labels: { 'app.kubernetes.io/component': 'node-agent' },
  },
  // a MicroTime, as the API server requires of a Lease's times
  spec: {
    holderIdentity: `drainer-${nodeName}/uid`,
    leaseDurationSeconds: 120,
    renewTime: microTime(new Date(renewTime)),
  },
});
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/drainer/leases';

const NODES = [
  withRecord('node-a', {
    phase: 'Evacuating',
    slot: 'drainer-evacuation-0',
    progress: {
      // 14 GiB still on the host, moving at 64 MiB/s: about 4 minutes
      nova: {
        moved: 3,
        total: 10,
        failed: 0,
        memoryLeftBytes: 14 * 1024 ** 3,
        bytesPerSecond: 64 * 1024 ** 2,
      },
      kubevirt: { moved: 1, total: 2, failed: 1 },
    },
  }),
  // queued later than node-c and node-d
  withRecord('node-b', { phase: 'Queued' }, 2000),
  // node-d and node-c queued at the same instant: the name breaks the tie
  withRecord('node-d', { phase: 'Queued', trigger: 'NodeMaintenance/nm-d' }, 1000),
  withRecord('node-c', { phase: 'Queued' }, 1000),
  withRecord('node-e', {
    phase: 'Failed',
    lastError:
      'nova: not every workload moved (web-1: No valid host was found. There are not enough hosts available for the flavor m1.xlarge)',
  }),
  // its drain returned: every pod evicted (the drain step's progress)
  withRecord('node-f', { phase: 'Evacuated', pods: { total: 6, evicted: 6, failed: 0 } }),
  node('node-g', { metadata: { name: 'node-g' } }), // in service: no row
  // opted out: a row, never evacuated
  node('node-h', { metadata: { name: 'node-h', labels: { 'drainer.dev/ignore': 'true' } } }),
];

/** The gate PDB (observed, no disruption allowed) and pod (Running and Ready, or `phase`) of a node. */
async function holdingGate(fx: KubeFixture, nodeName: string, phase = 'Running'): Promise<void> {
  const pdb = await fx.k.request<KubeObject>({
    method: 'POST',
    path: pdbsPath('drainer'),
    body: gatePdb('drainer', nodeName),
  });
  await fx.k.request({
    method: 'PUT',
    path: `${pdbsPath('drainer')}/${gateName(nodeName)}/status`,
    body: {
      ...pdb,
      status: { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 },
    },
  });
  const owner = {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    name: gateName(nodeName),
    uid: pdb.metadata.uid ?? '',
    controller: true,
  };
  const pod = await fx.k.request<KubeObject>({
    method: 'POST',
    path: podsPath('drainer'),
    body: gatePod('drainer', nodeName, 'pause', owner),
  });
  const ready = phase === 'Running' ? 'True' : 'False';
  await fx.k.request({
    method: 'PUT',
    path: `${podsPath('drainer')}/${gateName(nodeName)}/status`,
    body: {
      ...pod,
      status: {
        phase,
        conditions: [{ type: 'Ready', status: ready }],
        ...(phase === 'Running'
          ? {}
          : {
              containerStatuses: [
                {
                  name: 'gate',
                  state: {
                    waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "pause"' },
                  },
                },
              ],
            }),
      },
    },
  });
}

describe('drainer status', () => {
  let fx: KubeFixture;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    fx = await startFixture();
    for (const n of NODES) await fx.k.request({ method: 'POST', path: '/api/v1/nodes', body: n });
    await fx.k.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { metadata: { name: 'drainer' } },
    });
    // the gate objects as a disruption controller and a kubelet leave them: held where it should be
    for (const n of ['node-a', 'node-b', 'node-c', 'node-d', 'node-e']) await holdingGate(fx, n);
    // node-g is in service, its gate pod cannot start: it gets a row that says so
    await holdingGate(fx, 'node-g', 'Pending');
    const kubeconfig = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-status-')), 'kubeconfig');
    writeFileSync(kubeconfig, fx.server.kubeconfig());
    env = { KUBECONFIG: kubeconfig };
  });
  afterAll(async () => fx?.close());

  it('-o json: one row per node with a record, queue places by label then name', async () => {
    const r = await cli({ env })('status', '-o', 'json');
    expect(r.code, r.stderr).toBe(0);
    const { nodes } = JSON.parse(r.stdout) as { nodes: Record<string, unknown>[] };
    expect(nodes.map((n) => [n.node, n.phase, n.slot ?? n.queuePosition])).toEqual([
      ['node-a', 'Evacuating', 'drainer-evacuation-0'],
      ['node-b', 'Queued', 3],
      ['node-c', 'Queued', 1],
      ['node-d', 'Queued', 2],
      ['node-e', 'Failed', undefined],
      ['node-f', 'Evacuated', undefined],
      ['node-g', 'InService', undefined],
      ['node-h', 'Ignored', undefined],
    ]);
    expect(nodes[7]).toMatchObject({ ignored: true });
    expect(nodes[0]?.progress).toEqual({
      nova: {
        moved: 3,
        total: 10,
        failed: 0,
        memoryLeftBytes: 14 * 1024 ** 3,
        bytesPerSecond: 64 * 1024 ** 2,
      },
      kubevirt: { moved: 1, total: 2, failed: 1 },
    });
    expect(nodes[3]).toMatchObject({ trigger: 'NodeMaintenance/nm-d', queuedAt: iso(1000) });
    expect(nodes[4]?.lastError).toMatch(/No valid host/);
    // the pod drain's progress, where the drain step ran
    expect(nodes[5]?.pods).toEqual({ total: 6, evicted: 6, failed: 0 });
    expect(nodes[0]?.pods).toBeUndefined();
    // the drain gate: held with what is left, held by the failure, released once evacuated
    expect(nodes.map((n) => n.gate)).toEqual([
      'held (8 of 12 VMs left)',
      'held',
      'held',
      'held',
      'held: evacuation Failed: nova: not every workload moved (web-1: No valid host was found. There are not enough hosts available for the flavor m1.xlarge)',
      'released',
      // in service, shown because its gate pod cannot start: the API server's truth, not the wish
      'not held: its pod is Pending (ImagePullBackOff: Back-off pulling image "pause")',
      undefined, // node-h opts out: no gate of drainer's
    ]);
  });

  it('-o yaml says the same as JSON', async () => {
    const asJson = JSON.parse((await cli({ env })('status', '-o', 'json')).stdout) as unknown;
    const r = await cli({ env })('status', '-o', 'yaml');
    expect(yaml.load(r.stdout)).toEqual(asJson);
  });

  it("the table: node, phase, since, slot or queue place, progress per plugin, the gate; a row's long text under it", async () => {
    const r = await cli({ env })('status');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NODE\s+PHASE\s+SINCE\s+SLOT\/QUEUE\s+PROGRESS\s+DRAIN GATE$/);
    expect(lines).toHaveLength(16);
    // the last lines say whose settings the header and rows were weighed with
    expect(lines.slice(14).join(' ').replace(/\s+/g, ' ')).toBe(
      "config: this machine's only (ConfigMap drainer/drainer-config: not in the cluster), which may not be what the agents run with",
    );
    expect(lines[1]).toMatch(
      /^node-a\s+Evacuating\s+\S+\s+slot 0\s+nova 3\/10 ETA ~4m, kubevirt 1\/2 \(1 failed\)\s+held$/,
    );
    // a queued node says what it waits for, under its row: the slot and its holder, and who is ahead of it
    expect(lines.slice(4, 6)).toEqual([
      expect.stringMatching(/^node-c\s+Queued\s+\S+\s+queue #1\s+held$/),
      '        waiting for a slot held by node-a',
    ]);
    expect(lines.slice(6, 8)).toEqual([
      expect.stringMatching(/^node-d\s+Queued\s+\S+\s+queue #2\s+held$/),
      '        waiting for a slot held by node-a; behind node-c',
    ]);
    // a long error is cut at a word, and says where the rest is
    expect(lines.slice(8, 10)).toEqual([
      expect.stringMatching(/^node-e\s+Failed\s+\S+\s+held$/),
      '        last error: nova: not every workload moved (web-1: No valid host was found. There are… (-o wide shows it all)',
    ]);
    expect(lines[10]).toMatch(/^node-f\s+Evacuated\s+\S+\s+pods 6\/6 evicted\s+released$/);
    // a gate that does not hold says why
    expect(lines.slice(11, 13)).toEqual([
      expect.stringMatching(/^node-g\s+InService\s+not held$/),
      '        drain gate not held: its pod is Pending (ImagePullBackOff: Back-off pulling image "pause")',
    ]);
    expect(lines[13]).toMatch(/^node-h\s+Ignored\s*$/);
  });

  it('-o wide: every column (TRIGGER, LAST ERROR too), every text whole', async () => {
    const r = await cli({ env })('status', '-o', 'wide');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^NODE\s+PHASE\s+TRIGGER\s+SINCE\s+SLOT\/QUEUE\s+PROGRESS\s+DRAIN GATE\s+LAST ERROR$/,
    );
    expect(lines[1]).toMatch(
      /^node-a\s+Evacuating\s+cordon\s+\S+\s+drainer-evacuation-0\s+nova 3\/10, 14 GiB left, ETA ~4m, kubevirt 1\/2 \(1 failed\)\s+held \(8 of 12 VMs left\)$/,
    );
    expect(lines[4]).toMatch(
      /^node-d\s+Queued\s+NodeMaintenance\/nm-d\s+\S+\s+queue #2\s+held\s+waiting for a slot held by node-a; behind node-c$/,
    );
    expect(lines[5]).toMatch(
      /^node-e\s+Failed\s+cordon\s+\S+\s+held: evacuation Failed: .*\s+nova: not every workload moved \(web-1: No valid host was found\. There are not enough hosts available for the flavor m1\.xlarge\)$/,
    );
    expect(r.stdout).not.toContain('…');
  });

  it("says each node's agent is alive, or gone since when (record may be stale), from its node Lease", async () => {
    await fx.k.request({ method: 'POST', path: LEASES, body: lease('node-a', new Date().toISOString()) });
    // node-e's agent was killed: its last renewal is long past
    await fx.k.request({ method: 'POST', path: LEASES, body: lease('node-e', iso(0)) });

    const r = await cli({ env })('status');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/PROGRESS\s+DRAIN GATE\s+AGENT$/);
    expect(lines[1]).toMatch(/^node-a\s.*\salive$/);
    expect(lines[8]).toMatch(/^node-e\s.*\sheld\s+gone \S+$/);
    // -o wide says what a gone agent means
    const wide = (await cli({ env })('status', '-o', 'wide')).stdout.split('\n');
    expect(wide[5]).toMatch(/^node-e\s.*\sgone \S+ \(record may be stale\)\s+nova: not every workload moved/);
    const json = JSON.parse((await cli({ env })('status', '-o', 'json')).stdout) as {
      nodes: { node: string; agent?: object }[];
    };
    expect(json.nodes.find((n) => n.node === 'node-e')?.agent).toEqual({
      holder: 'drainer-node-e/uid',
      alive: false,
      goneSince: new Date(T0 + 120_000).toISOString(),
    });
    expect(json.nodes.find((n) => n.node === 'node-b')?.agent).toBeUndefined();
    for (const n of ['node-a', 'node-e'])
      await fx.k.request({ method: 'DELETE', path: `${LEASES}/drainer-node-${n}` });
  });

  it('the table fits an ordinary terminal (120 columns), and -o wide still has every text whole', async () => {
    // the widest case: an AGENT column, one of them gone for months
    await fx.k.request({ method: 'POST', path: LEASES, body: lease('node-a', new Date().toISOString()) });
    await fx.k.request({ method: 'POST', path: LEASES, body: lease('node-e', iso(0)) });
    const table = await cli({ env })('status');
    const wide = await cli({ env })('status', '-o', 'wide');
    for (const n of ['node-a', 'node-e'])
      await fx.k.request({ method: 'DELETE', path: `${LEASES}/drainer-node-${n}` });

    expect(table.code, table.stderr).toBe(0);
    const tooWide = table.stdout.split('\n').filter((l) => l.length > 120);
    expect(tooWide).toEqual([]);
    for (const whole of [
      'NodeMaintenance/nm-d',
      'drainer-evacuation-0',
      'nova 3/10, 14 GiB left, ETA ~4m, kubevirt 1/2 (1 failed)',
      'held (8 of 12 VMs left)',
      '(record may be stale)',
      'web-1: No valid host was found. There are not enough hosts available for the flavor m1.xlarge)',
      'not held: its pod is Pending (ImagePullBackOff: Back-off pulling image "pause")',
      'waiting for a slot held by node-a; behind node-c, node-d',
    ])
      expect(wide.stdout).toContain(whole);
    expect(wide.stdout).not.toContain('…');
  });

  it('--watch redraws when a record changes, and ends on Ctrl-C', async () => {
    const stdout = new Capture();
    const stop = new AbortController();
    const cwd = mkdtempSync(path.join(tmpdir(), 'drainer-status-watch-'));
    const running = main(['status', '--watch', '-o', 'json'], {
      io: { stdout, stderr: new Capture(), env, cwd, homeDir: cwd, etcDir: cwd, signal: stop.signal },
    });
    const docs = () => stdout.text.split(/\n(?=\{)/).filter(Boolean);
    const until = async (what: string, ok: () => boolean) => {
      for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
      expect(ok(), what).toBe(true);
    };
    await until('first draw', () => docs().length === 1);
    await setAnnotation(
      fx.k,
      'node-g',
      STATE_ANNOTATION,
      record({ phase: 'Evacuating', slot: 'drainer-evacuation-1' }),
    );
    await until('redraw', () => docs().length === 2);
    const last = JSON.parse(docs()[1] ?? '{}') as { nodes: { node: string; slot?: string }[] };
    expect(last.nodes.find((n) => n.node === 'node-g')?.slot).toBe('drainer-evacuation-1');
    stop.abort();
    expect(await running).toBe(0);
  });

  it('--watch has the AGENT column too, and follows the node Leases', async () => {
    const stdout = new Capture();
    const stop = new AbortController();
    const cwd = mkdtempSync(path.join(tmpdir(), 'drainer-status-watch-'));
    await fx.k.request({ method: 'POST', path: LEASES, body: lease('node-a', new Date().toISOString()) });
    const running = main(['status', '--watch', '-o', 'json'], {
      io: { stdout, stderr: new Capture(), env, cwd, homeDir: cwd, etcDir: cwd, signal: stop.signal },
    });
    type Doc = { nodes: { node: string; agent?: { holder: string; alive: boolean } }[] };
    const docs = () =>
      stdout.text
        .split(/\n(?=\{)/)
        .filter(Boolean)
        .map((d) => JSON.parse(d) as Doc);
    const agentOf = (doc: Doc | undefined, name: string) => doc?.nodes.find((n) => n.node === name)?.agent;
    const until = async (what: string, ok: () => boolean) => {
      for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
      expect(ok(), what).toBe(true);
    };
    await until('first draw', () => docs().length === 1);
    // the column is there from the first draw: node-a's agent holds its Lease
    expect(agentOf(docs()[0], 'node-a')).toEqual({ holder: 'drainer-node-a/uid', alive: true });
    expect(agentOf(docs()[0], 'node-b')).toBeUndefined();
    // node-b's agent starts: its Lease alone redraws (no Node changed)
    await fx.k.request({ method: 'POST', path: LEASES, body: lease('node-b', new Date().toISOString()) });
    await until('redraw on a new Lease', () => docs().length === 2);
    expect(agentOf(docs()[1], 'node-b')).toEqual({ holder: 'drainer-node-b/uid', alive: true });
    // node-a's agent was killed long ago: its Lease says so when next written
    await fx.k.request({
      method: 'PUT',
      path: `${LEASES}/drainer-node-node-a`,
      body: lease('node-a', iso(0)),
    });
    await until('redraw on a stale Lease', () => docs().length === 3);
    expect(agentOf(docs()[2], 'node-a')).toMatchObject({ holder: 'drainer-node-a/uid', alive: false });
    stop.abort();
    expect(await running).toBe(0);
    for (const n of ['node-a', 'node-b'])
      await fx.k.request({ method: 'DELETE', path: `${LEASES}/drainer-node-${n}` });
  });

  it.skipIf(!existsSync('/usr/bin/kubectl'))(
    'works as a kubectl plugin: kubectl drainer status runs the kubectl-drainer bin',
    async () => {
      // what npm install does with package.json's bin: a kubectl-drainer link on PATH
      const binDir = mkdtempSync(path.join(tmpdir(), 'drainer-kubectl-plugin-'));
      symlinkSync(
        path.resolve(import.meta.dirname, '../../bin/drainer.js'),
        path.join(binDir, 'kubectl-drainer'),
      );
      const { stdout } = await promisify(execFile)('/usr/bin/kubectl', ['drainer', 'status', '-o', 'json'], {
        env: { ...env, PATH: `${binDir}:${path.dirname(process.execPath)}:/usr/bin:/bin` },
        encoding: 'utf8',
      });
      const { nodes } = JSON.parse(stdout) as { nodes: { node: string }[] };
      expect(nodes.map((n) => n.node)).toContain('node-c');
      // the help names the command as its user typed it
      const help = await promisify(execFile)('/usr/bin/kubectl', ['drainer', '--help'], {
        env: { ...env, PATH: `${binDir}:${path.dirname(process.execPath)}:/usr/bin:/bin` },
        encoding: 'utf8',
      });
      expect(help.stdout).toMatch(/^kubectl drainer <command> \[options\]/);
      expect(help.stdout).toContain('kubectl drainer status');
    },
  );
});
