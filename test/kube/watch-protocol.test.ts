import { afterEach, expect, it } from 'vitest';
import { createKubeClients } from '../../src/kube/client.ts';
import { runWatch } from '../../src/kube/watch.ts';
import { fakeServer, kubeconfigFor, silentLog, until } from './helpers.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

it('restarts a watch stream that stays silent past its timeout', async () => {
  let watches = 0;
  const s = await fakeServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.includes('watch=1')) {
      watches++;
      res.flushHeaders(); // and then never a byte: a half-dead connection
      return;
    }
    res.end(JSON.stringify({ kind: 'NodeList', metadata: { resourceVersion: '7' }, items: [] }));
  });
  closers.push(s.close);
  const k = createKubeClients({ kubeconfigYaml: kubeconfigFor(s.url) });
  const stop = new AbortController();
  const done = runWatch({
    k,
    path: '/api/v1/nodes',
    onEvent: () => undefined,
    signal: stop.signal,
    log: silentLog(),
    timeoutSeconds: 1,
    watchdogMarginMs: 50,
  });
  await until(() => watches >= 2, 'a second watch request', 5000);
  stop.abort();
  await done;
});

it('relists (with backoff) when the watch request itself answers 410', async () => {
  let lists = 0;
  let watches = 0;
  const s = await fakeServer((req, res) => {
    if (req.url?.includes('watch=1')) {
      watches++;
      res.writeHead(410, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' }),
      );
      return;
    }
    lists++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'NodeList', metadata: { resourceVersion: String(lists) }, items: [] }));
  });
  closers.push(s.close);
  const k = createKubeClients({ kubeconfigYaml: kubeconfigFor(s.url) });
  const stop = new AbortController();
  const done = runWatch({
    k,
    path: '/api/v1/nodes',
    onEvent: () => undefined,
    signal: stop.signal,
    log: silentLog(),
    backoff: { initialMs: 10, maxMs: 20 },
  });
  await until(() => lists >= 3, 'repeated relists', 5000);
  stop.abort();
  await done;
  expect(watches).toBeGreaterThanOrEqual(2);
});
