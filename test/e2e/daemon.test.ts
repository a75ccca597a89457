// Story: the daemon as the DaemonSet runs it: NODE_NAME set, kubeconfig given, health server up;
// /readyz turns ready once the watches synced, /metrics shows the evacuation, SIGTERM stops it
// without uncordoning.
import { afterAll, describe, expect, it } from 'vitest';
import { startDaemon } from './daemon-run.ts';
import { smallWorld } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';

describe('drainer daemon (full stack)', () => {
  let stack: Stack | undefined;
  afterAll(async () => stack?.close());

  it('serves readiness and metrics, evacuates on cordon, and stops on SIGTERM leaving the cordon', async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 2 }) });
    const s = stack;
    // the daemon's pod-style wire sends a DELETE body without Content-Length: the leftover bytes
    // corrupt the keep-alive connection and a later request is answered 400 (issue 28 item 1)
    s.expectBroken('unexpected-4xx', 'issue 28 item 1: DELETE without Content-Length');
    // the kubeconfig still wins over the in-cluster environment
    const daemon = await startDaemon(s, 'node-a', { KUBERNETES_SERVICE_HOST: '10.0.0.1' });
    await until('ready', async () => (await daemon.get('/readyz')).status === 200);

    await s.cordon('node-a');
    await until('evacuated', async () => (await s.record('node-a'))?.phase === 'Evacuated');
    const metrics = (await daemon.get('/metrics')).text;
    expect(metrics).toMatch(/drainer_evacuations_total\{result="succeeded"\} 1/);
    expect(metrics).toMatch(/drainer_migrations_total\{plugin="nova",result="succeeded"\} 2/);
    expect(metrics).toMatch(/drainer_api_requests_total\{api="kubernetes",code="200"\}/);

    await daemon.stop(); // SIGTERM
    expect((await s.node('node-a')).spec?.unschedulable).toBe(true);
    expect((await s.record('node-a'))?.phase).toBe('Evacuated');
  });
});
