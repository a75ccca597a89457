// A change of drainer's stranded on a node with no record (issue 27 item 6): the agent undoes it
// when the node is in service, tells it in an Event either way, and `drainer status` shows it.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { fleetRows } from '../../src/core/fleet/fleet-view.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import { strandedAction } from '../../src/core/restore/stranded.ts';
import type { StrandedChange } from '../../src/core/backends/plugin.ts';
import { IGNORE_LABEL, STRANDED_ANNOTATION } from '../../src/names.ts';
import { DrainGate } from '../../src/core/gate/gate.ts';
import { gateName } from '../../src/kube/gate.ts';
import { FakeGateApi } from './fake-gate.ts';
import { KeyedQueue } from '../../src/core/agent/queue.ts';
import { FakeCluster, FakeHost, quietLogger, succeeded } from './fakes.ts';

const DISABLED = { status: 'disabled', disabledReason: 'drainer: cordon 2026-11-25T09:00:00Z' };

describe('strandedAction: the one predicate the agent and drainer doctor share', () => {
  it.each([
    ['disabled by drainer, no record, in service', DISABLED, false, true, 'restore'],
    ['disabled by drainer, no record, not in service', DISABLED, false, false, 'report'],
    ['disabled by drainer, a record owns it', DISABLED, true, true, 'none'],
    ['disabled by someone else', { status: 'disabled', disabledReason: 'rack swap' }, false, true, 'none'],
    ['disabled without a reason', { status: 'disabled', disabledReason: null }, false, true, 'none'],
    ['enabled', { status: 'enabled', disabledReason: null }, false, true, 'none'],
  ])('%s: %s', (_what, service, hasRecord, inService, action) => {
    expect(strandedAction({ service, prefix: 'drainer:', hasRecord, inService })).toBe(action);
  });
});

function setup(
  found: (inService: boolean) => StrandedChange | undefined,
  gate?: DrainGate,
  o: { config?: object; now?: () => Date } = {},
) {
  const cluster = new FakeCluster();
  const asked: boolean[] = [];
  const host = new FakeHost([
    {
      name: 'nova',
      evacuate: async () => succeeded('nova'),
      stranded: async (inService) => {
        asked.push(inService);
        return found(inService);
      },
    },
  ]);
  const config = configSchema.parse(o.config ?? {});
  const reconciler = new Reconciler({
    cluster,
    host,
    config,
    log: quietLogger(),
    ...(gate ? { gate } : {}),
    ...(o.now ? { now: o.now } : {}),
  });
  const reconcile = () => reconciler.reconcile('node-7', new AbortController().signal);
  return { cluster, asked, reconcile };
}

const change = (restored: boolean): StrandedChange => ({
  what: 'nova-compute service on host-7',
  reason: DISABLED.disabledReason,
  restored,
});

/** A node in service whose gate pod is not running yet (a Node registered anew, its gate pod starting). */
function gateNotYetRunning() {
  const api = new FakeGateApi();
  api.startsRunning = false;
  const gate = new DrainGate({
    api,
    log: quietLogger(),
    podOf: (n) => ({ namespace: 'drainer', name: gateName(n) }),
    retry: { initialMs: 5, maxMs: 20 },
  });
  const world = setup((inService) => change(inService), gate);
  world.cluster.addNode('node-7');
  return { api, gate, ...world };
}

describe('the agent on a node with no record', () => {
  it('restores a stranded service of a node in service, with a Normal Event and a note status shows', async () => {
    const { cluster, asked, reconcile } = setup((inService) => change(inService));
    cluster.addNode('node-7');

    await reconcile();

    expect(asked).toEqual([true]);
    expect(cluster.events.map((e) => [e.type, e.reason])).toEqual([['Normal', 'StrandedService']]);
    expect(cluster.events[0]?.message).toContain('nova-compute service on host-7 was left by drainer');
    const [row] = fleetRows([cluster.node('node-7')], new Date());
    expect(row).toMatchObject({
      node: 'node-7',
      phase: 'InService',
      lastError: expect.stringContaining('restored'),
    });
  });

  it('looks once per Node object: not at every pass, again when the Node was registered anew', async () => {
    const { cluster, asked, reconcile } = setup(() => undefined);
    const node = cluster.addNode('node-7');
    const registered = (uid: string) => Object.assign(node.metadata, { uid });
    registered('uid-1');

    await reconcile();
    await reconcile();
    expect(asked).toHaveLength(1);

    registered('uid-2');
    await reconcile();
    expect(asked).toHaveLength(2);
    expect(cluster.events).toEqual([]);
    expect(cluster.node('node-7').metadata.annotations?.[STRANDED_ANNOTATION]).toBeUndefined();
  });

  it('looks again once strandedCheckInterval has passed: a server its owner moved here after its record was lost', async () => {
    let t = Date.parse('2026-11-28T10:00:00Z');
    let moved = false;
    const { cluster, asked, reconcile } = setup(
      (inService) => (moved ? change(inService) : undefined),
      undefined,
      {
        config: { strandedCheckInterval: 900 },
        now: () => new Date(t),
      },
    );
    cluster.addNode('node-7');

    await reconcile();
    moved = true; // the owner's cold move lands a server drainer stopped and marked elsewhere
    t += 899_000;
    await reconcile();
    expect(asked).toEqual([true]);

    t += 1000;
    await reconcile();
    expect(asked).toEqual([true, true]);
    expect(cluster.events.map((e) => e.reason)).toEqual(['StrandedService']);
  });

  it('strandedCheckInterval 0: only once per Node object', async () => {
    let t = 0;
    const { cluster, asked, reconcile } = setup(() => undefined, undefined, {
      config: { strandedCheckInterval: 0 },
      now: () => new Date(t),
    });
    cluster.addNode('node-7');
    await reconcile();
    t += 30 * 24 * 3600_000;
    await reconcile();
    expect(asked).toEqual([true]);
  });

  it('asks again at the next pass when the plugin could not look (its cloud did not answer)', async () => {
    let down = true;
    const { cluster, asked, reconcile } = setup((inService) => {
      if (down) throw new Error('nova did not answer');
      return change(inService);
    });
    cluster.addNode('node-7');

    await reconcile();
    down = false;
    await reconcile();
    await reconcile();

    expect(asked).toEqual([true, true]);
    expect(cluster.events.map((e) => e.reason)).toEqual(['StrandedService']);
  });

  it('only reports it on a node that is not to be evacuated (opted out): Warning Event, status Stranded', async () => {
    const { cluster, asked, reconcile } = setup((inService) => change(inService));
    const node = cluster.addNode('node-7', { unschedulable: true });
    node.metadata.labels = { [IGNORE_LABEL]: 'true' };

    await reconcile();

    expect(asked).toEqual([false]);
    const told = cluster.events.find((e) => e.reason === 'StrandedService');
    expect(told?.type).toBe('Warning');
    expect(told?.message).toContain('drainer restore --node node-7');
    const [row] = fleetRows([cluster.node('node-7')], new Date());
    expect(row).toMatchObject({ phase: 'Stranded', ignored: true });
  });

  it('status stops showing a restored one after a day', () => {
    const note = { plugin: 'nova', ...change(true), at: '2026-11-24T09:00:00.000Z' };
    const node = { metadata: { name: 'n', annotations: { [STRANDED_ANNOTATION]: JSON.stringify([note]) } } };
    expect(fleetRows([node], new Date('2026-11-24T20:00:00Z'))).toHaveLength(1);
    expect(fleetRows([node], new Date('2026-11-25T10:00:00Z'))).toEqual([]);
  });

  it('gives a service back only once the drain gate holds: a Node registered anew waits for its gate pod', async () => {
    // seed 3 of the soak: Karpenter's replacement of hv-1-b got nova-compute back before its gate pod
    // ran, servers landed, and the next drain returned with 2 on the host
    const { api, gate, cluster, asked, reconcile } = gateNotYetRunning();

    const first = await reconcile();
    expect(asked).toEqual([]);
    expect(cluster.events).toEqual([]);

    api.run('node-7');
    // the pass handed the wait for the gate to its queue: it answers once the gate is seen holding
    expect(await first.requeueWhen?.(new AbortController().signal)).toBe(true);
    await reconcile();
    expect(asked).toEqual([true]);
    expect(api.guards('node-7')).toBe(true);
    gate.stop();
  });

  it('waits for the gate without passes in between: one pass before it holds, one after (issue 51)', async () => {
    // 1,000 agents whose gates an overloaded API server kept from holding re-ran their passes every
    // 2 s, a Node read each, and kept it overloaded: the look now follows the gate, not a timer
    const { api, gate, asked, reconcile } = gateNotYetRunning();
    let passes = 0;
    const ctl = new AbortController();
    const queue = new KeyedQueue({
      signal: ctl.signal,
      log: quietLogger(),
      handler: async () => {
        passes++;
        return reconcile();
      },
    });
    queue.enqueue('node-7');
    await queue.idle();
    await new Promise((r) => setTimeout(r, 100)); // the gate looks again and again meanwhile
    expect(passes).toBe(1);
    expect(asked).toEqual([]);

    api.run('node-7');
    for (let i = 0; i < 200 && asked.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(asked).toEqual([true]);
    expect(passes).toBe(2);
    ctl.abort();
    gate.stop();
  });
});
