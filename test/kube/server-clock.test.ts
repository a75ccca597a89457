// Story: the API server's clock as the agent keeps it from the Date headers of its answers. A Date
// header has whole seconds; answers whose second boundary falls elsewhere narrow it down to the
// round trip. A server whose clock is stepped is followed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServerClock } from '../../src/kube/server-clock.ts';
import { KubeHttp, type KubeWire } from '../../src/kube/http.ts';
import { NodeWire } from '../../src/kube/wire-pod.ts';
import { startFixture, type KubeFixture } from './sandbox.ts';

/** A server whose clock is `offset` ms off ours, answering `rtt` ms after we ask. */
function server(offset: number, rtt: number) {
  let mono = 1_000_000;
  const step = (ms: number) => {
    offset += ms;
  };
  const clock = new ServerClock(() => mono);
  const ask = (at: number) => {
    mono = at;
    const sent = clock.mark();
    mono += rtt / 2;
    const second = Math.floor((mono + offset) / 1000) * 1000;
    const date = new Date(second).toUTCString();
    mono += rtt / 2;
    clock.observe(date, sent, clock.mark());
  };
  return { clock, ask, step, truth: () => mono + offset };
}

describe('the API server clock', () => {
  it('knows nothing before an answer', () => {
    expect(new ServerClock().now()).toBeUndefined();
  });

  it('one answer places it within a second; answers at other moments narrow it to the round trip', () => {
    const s = server(1_764_000_000_321, 4);
    s.ask(1_000_000);
    expect(s.clock.uncertainty()).toBeLessThanOrEqual(502);
    expect(Math.abs(s.clock.now()!.getTime() - s.truth())).toBeLessThanOrEqual(502);
    // requests as an agent makes them, at moments unrelated to the server's seconds
    for (let i = 1; i <= 120; i++) s.ask(1_000_000 + i * 1_237);
    // tens of ms: what it knew ages as the clocks may drift apart (100 ppm), yet far finer than a second
    expect(s.clock.uncertainty()).toBeLessThan(25);
    expect(Math.abs(s.clock.now()!.getTime() - s.truth())).toBeLessThan(25);
  });

  it('follows a server whose clock was stepped', () => {
    const s = server(1_764_000_000_000, 2);
    for (let i = 0; i < 20; i++) s.ask(1_000_000 + i * 1_111);
    s.step(45_000); // NTP put the server's clock right
    s.ask(1_030_000);
    expect(Math.abs(s.clock.now()!.getTime() - s.truth())).toBeLessThanOrEqual(1_000);
  });

  it('ignores an answer without a usable Date header', () => {
    const c = new ServerClock(() => 5);
    c.observe(undefined, 0, 5);
    c.observe('yesterday-ish', 0, 5);
    expect(c.now()).toBeUndefined();
  });
});

describe("the sandbox's API server sends Date headers, as a real one does", () => {
  let f: KubeFixture;
  beforeEach(async () => {
    f = await startFixture();
  });
  afterEach(() => f.close());

  it('on answers and on errors, and the transport keeps the clock from them', async () => {
    const base = /server: (\S+)/.exec(f.server.kubeconfig())?.[1] ?? '';
    for (const path of ['/api/v1/nodes', '/api/v1/nodes/missing']) {
      const res = await fetch(`${base}${path}`);
      expect(Date.parse(res.headers.get('date') ?? '')).not.toBeNaN();
    }
    await f.k.request({ path: '/api/v1/nodes' });
    expect(Math.abs((f.k.serverNow?.()?.getTime() ?? 0) - Date.now())).toBeLessThan(1_500);
  });

  it("the Pod's wire carries the Date header too", async () => {
    const base = /server: (\S+)/.exec(f.server.kubeconfig())?.[1] ?? '';
    const wire = new NodeWire({ server: base });
    try {
      const res = await wire.send({ method: 'GET', pathAndQuery: '/api/v1/nodes', headers: {} });
      await res.text();
      expect(Date.parse(res.date ?? '')).not.toBeNaN();
    } finally {
      wire.close();
    }
  });

  it('a wire that carries no Date header leaves the clock unknown', async () => {
    const wire: KubeWire = {
      send: async () => ({ status: 200, stream: () => null, text: async () => '{}' }),
    };
    const k = new KubeHttp(wire);
    await k.request({ path: '/api/v1/nodes' });
    expect(k.serverNow()).toBeUndefined();
  });
});
