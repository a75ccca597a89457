// Story: the daemon as the DaemonSet runs it: NODE_NAME set, kubeconfig given, health server up;
// /readyz turns ready once the watches synced, /metrics shows the evacuation, SIGTERM stops it
// without uncordoning.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDaemon } from '../../src/cli/daemon.ts';
import { configSchema } from '../../src/config/schema.ts';
import { smallWorld } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';

describe('drainer daemon (full stack)', () => {
  let stack: Stack | undefined;
  afterAll(async () => stack?.close());

  it('serves readiness and metrics, evacuates on cordon, and stops on SIGTERM leaving the cordon', async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 2 }) });
    const s = stack;
    const kubeconfig = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-daemon-')), 'kubeconfig');
    writeFileSync(kubeconfig, s.sandbox.kube.kubeconfig());
    const config = configSchema.parse({
      ...s.config,
      nodeName: 'node-a',
      kubeconfig,
      server: { enabled: true, bindAddress: '127.0.0.1', port: 0 },
    });
    const stop = new AbortController();
    let port = 0;
    const running = runDaemon({
      config,
      log: s.log,
      signal: stop.signal,
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, // the kubeconfig still wins
      onListening: (p) => (port = p),
    });
    const get = async (p: string) => {
      const res = await fetch(`http://127.0.0.1:${port}${p}`);
      return { status: res.status, text: await res.text() };
    };
    await until('listening', () => port > 0);
    await until('ready', async () => (await get('/readyz')).status === 200);

    await s.cordon('node-a');
    await until('evacuated', async () => (await s.record('node-a'))?.phase === 'Evacuated');
    const metrics = (await get('/metrics')).text;
    expect(metrics).toMatch(/drainer_evacuations_total\{result="succeeded"\} 1/);
    expect(metrics).toMatch(/drainer_migrations_total\{plugin="nova",result="succeeded"\} 2/);
    expect(metrics).toMatch(/drainer_api_requests_total\{api="kubernetes",code="200"\}/);

    stop.abort(); // SIGTERM
    await running;
    expect((await s.node('node-a')).spec?.unschedulable).toBe(true);
    expect((await s.record('node-a'))?.phase).toBe('Evacuated');
  });
});
