import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startCountingProxy, type CountingProxy } from '../../bench/lib/proxy.ts';
import { metricValue } from '../../bench/lib/daemon.ts';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

describe('the counting proxy', () => {
  it('passes requests through and counts the bytes the client read', async () => {
    const body = 'x'.repeat(10_000);
    const server = createServer((_req, res) => res.end(body));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    cleanup.push(() => new Promise((r) => server.close(() => r())));
    const { port } = server.address() as AddressInfo;
    const proxy: CountingProxy = await startCountingProxy(`http://127.0.0.1:${port}`);
    cleanup.push(() => proxy.close());

    const text = await (await fetch(`${proxy.url}/anything`)).text();

    expect(text).toBe(body);
    expect(proxy.bytesDown()).toBeGreaterThan(body.length); // body plus status line and headers
    expect(proxy.bytesUp()).toBeGreaterThan(0);
    expect(proxy.connections()).toBe(1);
  });
});

describe('reading the daemon metrics', () => {
  it('finds a sample with or without labels, and NaN when absent', () => {
    const text = '# HELP x\nnodejs_heap_size_used_bytes 123456\nfoo{a="b"} 2.5\n';
    expect(metricValue(text, 'nodejs_heap_size_used_bytes')).toBe(123456);
    expect(metricValue(text, 'foo')).toBe(2.5);
    expect(metricValue(text, 'bar')).toBeNaN();
  });
});
