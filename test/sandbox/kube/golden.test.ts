// The sandbox's Kubernetes API against 47 exchanges recorded from a real kube-apiserver v1.24
// (golden-1.24.json beside this file: facts recorded from a real server, kept in the repository so a
// fresh clone and CI replay them; golden-1.24.md says how they were recorded): the recorded initial
// state is built, every exchange replayed in order, and each answer compared by golden-compare.ts.
// Differences the sandbox keeps on purpose are the EXCEPTIONS below.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../../src/sandbox/clock.ts';
import { defaultTimings, startControllers } from '../../../src/sandbox/controllers/index.ts';
import { compareAnswer, type Exception } from './golden-compare.ts';
import { readWireGolden, replayWire, setUpWireGolden } from './golden-wire.ts';
import { readWatch, startApi, type Api, type Json } from './helpers.ts';

const GOLDEN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'golden-1.24.json');

interface Exchange {
  name: string;
  request: { method: string; path: string; contentType?: string; body: Json };
  response: { status: number; body: Json };
}

export const EXCEPTIONS: readonly Exception[] = [
  {
    path: /\.metadata\.managedFields$/,
    reason: 'no server-side apply bookkeeping: drainer never reads managedFields',
  },
  {
    path: /^(\.items\[0\])?\.spec\.taints$/,
    exchanges: /^(get node|list nodes by fieldSelector|cordon by merge patch|annotate by merge patch)$/,
    reason:
      'no TaintNodesByCondition admission: a node created here is not tainted not-ready (nothing would lift it)',
  },
  {
    path: /\.conditions\[\d+\]\.(lastProbeTime|lastTransitionTime)$/,
    reason: 'conditions are stored as written; Go writes the unset times as null, which drainer never reads',
  },
  {
    path: /\.spec\.volumes$|\.volumeMounts$/,
    reason: 'no ServiceAccount admission: pods get no kube-api-access token volume, which drainer ignores',
  },
];

const lastApplied = (o: Json): Json => ({
  ...o,
  metadata: {
    ...o.metadata,
    annotations: {
      ...(o.metadata.annotations ?? {}),
      'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify(o)}\n`,
    },
  },
});

function pod(name: string, app: string): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'golden', labels: { app } },
    spec: {
      containers: [{ name: 'c', image: 'registry.example/web:1' }],
      nodeName: 'golden-node',
      terminationGracePeriodSeconds: 30,
    },
  };
}

const pdb = (name: string, app: string, budget: Json): Json => ({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name, namespace: 'golden' },
  spec: { ...budget, selector: { matchLabels: { app } } },
});

describe('sandbox Kubernetes API against recorded kube-apiserver exchanges', () => {
  const exchanges = JSON.parse(readFileSync(GOLDEN, 'utf8')).exchanges as Exchange[];
  let api: Api;
  const abort = new AbortController();
  const ours: { status: number; body: Json }[] = [];

  const apply = async (collection: string, o: Json) => {
    const res = await api.call('POST', collection, lastApplied(o));
    if (res.status !== 201)
      throw new Error(`setup ${o.metadata.name}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  const running = async (name: string) => {
    const status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
    const res = await api.call(
      'PATCH',
      `/api/v1/namespaces/golden/pods/${name}/status`,
      { status },
      'application/merge-patch+json',
    );
    if (res.status !== 200) throw new Error(`setup ${name} Running: ${res.status}`);
  };
  const settled = async (name: string, generation: number) => {
    for (let i = 0; i < 400; i++) {
      const s = api.server.store.get('poddisruptionbudgets.policy', 'golden', name).status as Json;
      if (s?.observedGeneration === generation) return;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`PDB ${name} never observed generation ${generation}`);
  };

  /** State changes the recording made between exchanges (README: lonely2 and the relaxed budget). */
  const between: Record<number, () => Promise<void>> = {
    19: async () => {
      await apply('/api/v1/namespaces/golden/pods', pod('lonely2', 'lonely'));
      await running('lonely2');
    },
    22: async () => {
      await api.call(
        'PATCH',
        '/apis/policy/v1/namespaces/golden/poddisruptionbudgets/web',
        { spec: { minAvailable: 1 } },
        'application/merge-patch+json',
      );
      await settled('web', 2);
    },
  };

  beforeAll(async () => {
    api = await startApi();
    // The recording ran the disruption controller and no kubelet: evicted pods stay terminating.
    startControllers(
      {
        store: api.server.store,
        clock: new ScaledClock(1),
        timings: defaultTimings,
      },
      abort.signal,
      { kubelet: false, replicaset: false, nodeLifecycle: false, kubevirt: false },
    );
    await apply('/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'golden-node', labels: { 'kubernetes.io/hostname': 'golden-node' } },
    });
    await apply('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'golden' } });
    for (const name of ['web-0', 'web-1', 'web-2']) {
      await apply('/api/v1/namespaces/golden/pods', pod(name, 'web'));
      await running(name);
    }
    const lonely = pod('lonely', 'lonely');
    lonely.spec = { containers: [{ name: 'c', image: 'registry.example/x:1' }], nodeName: 'golden-node' };
    await apply('/api/v1/namespaces/golden/pods', lonely);
    const pdbs = '/apis/policy/v1/namespaces/golden/poddisruptionbudgets';
    await apply(pdbs, pdb('web', 'web', { minAvailable: 3 }));
    await apply(pdbs, pdb('all-a', 'lonely', { maxUnavailable: 1 }));
    await apply(pdbs, pdb('all-b', 'lonely', { maxUnavailable: 1 }));
    for (const name of ['web', 'all-a', 'all-b']) await settled(name, 1);
  });
  afterAll(async () => {
    abort.abort();
    await api?.server.close();
  });

  /** Our values for the recording's placeholders in request bodies. */
  function bind(i: number, body: Json): Json {
    if (body === null || body === undefined) return undefined;
    const rvOf = (j: number) => String(ours[j]?.body?.metadata?.resourceVersion);
    const rv = { 12: rvOf(4), 30: rvOf(28), 31: rvOf(28) }[i] ?? '1';
    const uid = String(ours[28]?.body?.metadata?.uid ?? 'd0c5e9a2-0000-4000-8000-000000000000');
    const text = JSON.stringify(body)
      .replaceAll('"<rv>"', JSON.stringify(rv))
      .replaceAll('"<uid>"', JSON.stringify(uid))
      .replaceAll('"<time>"', '"2026-11-22T10:00:00Z"')
      .replaceAll('"<microtime>"', '"2026-11-22T10:00:00.000000Z"');
    const out = JSON.parse(text);
    if (out?.metadata) delete out.metadata.managedFields;
    return out;
  }

  async function send(i: number, x: Exchange): Promise<{ status: number; body: Json }> {
    const { method, path: p, contentType, body } = x.request;
    const recorded = x.response.body?.watchEvents as Json[] | undefined;
    if (recorded) {
      const events = await readWatch(api.server.url + p, (evs) => evs.length >= recorded.length);
      return { status: 200, body: { watchEvents: events } };
    }
    return api.call(method, p, bind(i, body), contentType || 'application/json');
  }

  it('replays every exchange with the answers the real server gave', async () => {
    const report: string[] = [];
    for (const [i, x] of exchanges.entries()) {
      await between[i]?.();
      const got = await send(i, x);
      ours.push(got);
      const skip = EXCEPTIONS.filter((e) => !e.exchanges || e.exchanges.test(x.name));
      const diffs = compareAnswer(x.response, got, skip);
      if (diffs.length) report.push(`#${i} ${x.name}:\n    ${diffs.join('\n    ')}`);
    }
    expect(report.join('\n')).toBe('');
    expect(ours).toHaveLength(exchanges.length);
  });
});

// Byte-level exchanges kept in this repository (golden-wire.json): entries marked "derived" follow
// Go's net/http source until a real kube-apiserver's answer is recorded.
describe('sandbox Kubernetes API against byte-level exchanges (golden-wire.json)', () => {
  const golden = readWireGolden();
  let api: Api;
  beforeAll(async () => {
    api = await startApi();
    await setUpWireGolden(api, golden.setup);
  });
  afterAll(async () => {
    await api?.server.close();
  });

  it.each(golden.exchanges.map((x) => [x.name, x] as const))('%s', async (_name, x) => {
    expect((await replayWire(api.server.url, x, EXCEPTIONS)).join('\n')).toBe('');
  });

  it('keeps the unreadable request in the request log as a 400 (what an invariant check reads)', () => {
    const bad = api.server.requestLog.filter((r) => r.status === 400);
    // the line as Go would read it (cut to 100 characters): the stray body, then the next request
    expect(bad.map((r) => r.path)).toEqual([
      expect.stringMatching(/^\{"kind":"DeleteOptions".*\}POST \/api\/v1\//),
    ]);
  });
});
