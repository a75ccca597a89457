// `drainer start <node> [--now]` against the sandbox API server: it cordons the node, and with --now
// also sets drainer.dev/start-now naming who asked and when (one Node write); an unknown node fails.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeNode } from '../../src/kube/types.ts';
import { node, startFixture, type KubeFixture } from '../kube/sandbox.ts';
import { cli } from './harness.ts';

describe('drainer start', () => {
  let fx: KubeFixture;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    fx = await startFixture();
    for (const n of ['node-a', 'node-b'])
      await fx.k.request({ method: 'POST', path: '/api/v1/nodes', body: node(n) });
    const kubeconfig = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-start-')), 'kubeconfig');
    writeFileSync(kubeconfig, fx.server.kubeconfig());
    env = { KUBECONFIG: kubeconfig };
  });
  afterAll(async () => fx?.close());
  const get = (n: string) => fx.k.request<KubeNode>({ path: `/api/v1/nodes/${n}` });

  it('--now: cordons and asks the agent to start past windows and blockers, naming who', async () => {
    const before = Date.now();
    const r = await cli({ env })('start', 'node-a', '--now', '--by', 'alice@ops');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/node node-a cordoned; its agent starts it now, .*\(asked by alice@ops\)/);
    const n = await get('node-a');
    expect(n.spec?.unschedulable).toBe(true);
    const asked = JSON.parse(n.metadata.annotations?.['drainer.dev/start-now'] ?? '{}') as {
      by: string;
      at: string;
    };
    expect(asked.by).toBe('alice@ops');
    expect(Date.parse(asked.at)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('without --now: only the cordon', async () => {
    const r = await cli({ env })('start', 'node-b');
    expect(r.code, r.stderr).toBe(0);
    const n = await get('node-b');
    expect(n.spec?.unschedulable).toBe(true);
    expect(n.metadata.annotations?.['drainer.dev/start-now']).toBeUndefined();
  });

  /** A node with drainer's record on it. */
  const withRecord = (name: string, record: object) =>
    fx.k.request({
      method: 'POST',
      path: '/api/v1/nodes',
      body: node(name, { metadata: { name, annotations: { 'drainer.dev/state': JSON.stringify(record) } } }),
    });

  it('--now on a node whose evacuation began already: only the cordon (no start-now left behind)', async () => {
    const record = { phase: 'Evacuating', id: 'm-1', trigger: 'cordon', since: '2026-03-01T00:00:00.000Z' };
    await withRecord('node-c', record);
    const r = await cli({ env })('start', 'node-c', '--now');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'node node-c cordoned; its evacuation began already: --now has nothing left to start',
    );
    expect((await get('node-c')).metadata.annotations?.['drainer.dev/start-now']).toBeUndefined();
  });

  it('--now on a node waiting Queued: bound to its record', async () => {
    const record = { phase: 'Queued', id: 'm-2', trigger: 'cordon', since: '2026-03-01T00:00:00.000Z' };
    await withRecord('node-d', record);
    const r = await cli({ env })('start', 'node-d', '--now', '--by', 'bob');
    expect(r.code, r.stderr).toBe(0);
    const asked = JSON.parse(
      (await get('node-d')).metadata.annotations?.['drainer.dev/start-now'] ?? '{}',
    ) as object;
    expect(asked).toMatchObject({ by: 'bob', record: 'm-2' });
  });

  it('a node that does not exist: an error naming it, non-zero', async () => {
    const r = await cli({ env })('start', 'node-x', '--now');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/node-x/);
  });
});
