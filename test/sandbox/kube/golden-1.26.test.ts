// The sandbox's Kubernetes API against exchanges recorded from a real kube-apiserver v1.26 with a real
// kubelet (test/sandbox/kube/golden-1.26.json, made by test/real/record.ts; a copy is in
// ../shared/kube-golden/exchanges-1.26.json). The file is in the repository, so CI replays it too. Each
// exchange's waits (`after`) are done as they were when recording; "<uid>" in a request body is the uid of
// the object at the request path. Where the sandbox does not match the real server yet, KNOWN_GAPS lists
// exactly what differs: any other difference fails, and a listed one that no longer differs is reported.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../../src/sandbox/clock.ts';
import { defaultTimings, startControllers } from '../../../src/sandbox/controllers/index.ts';
import { compareAnswer, type Exception } from './golden-compare.ts';
import { node, startApi, type Api, type Json } from './helpers.ts';

const FILE = path.join(import.meta.dirname, 'golden-1.26.json');

interface Exchange {
  name: string;
  after?: string[];
  request: { method: string; path: string; contentType: string | null; body: Json; raw?: string };
  response: { status: number; body: Json; raw?: string[] };
}

const EXCEPTIONS: readonly Exception[] = [
  {
    path: /\.metadata\.managedFields$/,
    reason: 'no server-side apply bookkeeping: drainer never reads managedFields',
  },
  {
    path: /\.spec\.volumes$|\.volumeMounts$/,
    reason: 'no ServiceAccount admission: pods get no kube-api-access token volume, which drainer ignores',
  },
  {
    path: /\.conditions\[\d+\]\.(lastProbeTime|lastTransitionTime)$/,
    reason: 'conditions are stored as written; Go writes the unset times as null, which drainer never reads',
  },
  {
    // what a real kubelet and scheduler write, and defaulting drainer never reads
    path: /\.status\.(containerStatuses|hostIP|podIP|podIPs|qosClass|startTime)$|\.spec\.(dnsPolicy|enableServiceLinks|preemptionPolicy|priority|restartPolicy|schedulerName|securityContext|serviceAccount|serviceAccountName|terminationGracePeriodSeconds|tolerations)$|\.containers\[\d+\]\.(resources|terminationMessagePath|terminationMessagePolicy)$|\.status\.conditions$/,
    reason:
      'pod defaulting and the status a real kubelet writes (container ids, IPs, QoS, condition list): drainer reads phase and Ready only',
  },
];

/** Where the sandbox does not yet answer as the real server did: the exact differences, and who closes them. */
export const KNOWN_GAPS: Readonly<Record<string, { reason: string; diffs: readonly string[] }>> = {
  'create the namespace': {
    reason:
      'no namespace defaulting (label kubernetes.io/metadata.name, spec.finalizers, status.phase Active); drainer reads no namespace',
    diffs: ['.metadata.labels: missing', '.spec: missing', '.status: missing'],
  },
  'create a namespace that enforces Pod Security restricted': {
    reason: 'no namespace defaulting, as above',
    diffs: ['.metadata.labels.kubernetes.io/metadata.name: missing', '.spec: missing', '.status: missing'],
  },
  'create a PDB that allows one disruption': {
    reason:
      'a PDB is created without a status; the real server answers the zero status (disruptionsAllowed 0 …) before its controller observes it',
    diffs: ['.status: missing'],
  },
  'create a PDB that allows no disruption for it': {
    reason: 'a PDB is created without a status, as above',
    diffs: ['.status: missing'],
  },
  'eviction while the PDB status is not yet observed': {
    reason:
      'the eviction API does not refuse while status.observedGeneration is behind the generation (429, cause "… is still being processed by the server"); the gate engineer is changing eviction semantics (issue 27)',
    diffs: [
      'status 201 instead of 429',
      'reason undefined instead of TooManyRequests',
      'code 201 instead of 429',
      'causes [] instead of [DisruptionBudget]',
    ],
  },
  "the gate pod's spec under restricted (dry run)": {
    reason: 'a dry-run create answers without the uid, creationTimestamp and status the real server fills in',
    diffs: [
      '.metadata.uid: missing (recorded <uid>)',
      '.metadata.creationTimestamp: missing (recorded <time>)',
      '.status: missing',
    ],
  },
  'a hostNetwork pod under restricted (dry run)': {
    reason: "no Pod Security admission: a pod that violates the namespace's enforce level is admitted",
    diffs: ['status 201 instead of 403', 'object Pod instead of a Status'],
  },
};

describe('sandbox Kubernetes API against exchanges recorded from kube-apiserver v1.26 with a kubelet', () => {
  const doc = JSON.parse(readFileSync(FILE, 'utf8')) as { node: string; exchanges: Exchange[] };
  let api: Api;
  const abort = new AbortController();

  beforeAll(async () => {
    api = await startApi();
    startControllers(
      { store: api.server.store, clock: new ScaledClock(1), timings: defaultTimings },
      abort.signal,
      { replicaset: false, nodeLifecycle: false, kubevirt: false },
    );
    const res = await api.call('POST', '/api/v1/nodes', node(doc.node));
    if (res.status !== 201) throw new Error(`setup node ${doc.node}: ${res.status}`);
  });
  afterAll(async () => {
    abort.abort();
    await api?.server.close();
  });

  const until = async (what: string, ok: () => Promise<boolean>) => {
    for (let i = 0; i < 200; i++) {
      if (await ok()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`replay: timed out waiting for ${what}`);
  };

  async function waits(x: Exchange, ns: string): Promise<void> {
    for (const w of x.after ?? []) {
      const [kind, name] = w.split(':') as [string, string];
      const pod = () => api.get(`/api/v1/namespaces/${ns}/pods/${name}`);
      if (kind === 'running') await until(w, async () => (await pod()).body?.status?.phase === 'Running');
      if (kind === 'gone') await until(w, async () => (await pod()).status === 404);
      if (kind === 'observed')
        await until(w, async () => {
          const b = (await api.get(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/${name}`)).body;
          return b?.status?.observedGeneration === b?.metadata?.generation;
        });
    }
  }

  /** The raw bytes on one plain connection; the status lines the sandbox wrote before closing (or 3 s). */
  function raw(bytes: string): Promise<{ status: number; body: Json; raw: string[] }> {
    const url = new URL(api.server.url);
    return new Promise((resolve) => {
      const socket = net.connect(Number(url.port), url.hostname, () => socket.write(bytes));
      let data = '';
      const done = () => {
        socket.destroy();
        const lines = [...data.matchAll(/^HTTP\/1\.1 (\d{3}) [^\r\n]*/gm)].map((m) => m[0]);
        resolve({
          status: Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0),
          body: null,
          raw: lines,
        });
      };
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => (data += c));
      socket.on('end', done);
      socket.on('error', done);
      socket.setTimeout(3_000, done);
    });
  }

  it('replays every exchange; the sandbox differs only where KNOWN_GAPS says so', async () => {
    const unexpected: string[] = [];
    const closed: string[] = [];
    for (const [i, x] of doc.exchanges.entries()) {
      const ns = /\/namespaces\/([^/]+)\//.exec(x.request.path)?.[1] ?? '';
      await waits(x, ns);
      let got: { status: number; body: Json; raw?: string[] };
      if (x.request.raw !== undefined) got = await raw(x.request.raw);
      else {
        let body = x.request.body;
        if (JSON.stringify(body ?? null).includes('"<uid>"')) {
          const uid = (await api.get(x.request.path)).body?.metadata?.uid;
          body = JSON.parse(JSON.stringify(body).replaceAll('"<uid>"', JSON.stringify(uid)));
        }
        got = await api.call(
          x.request.method,
          x.request.path,
          body ?? undefined,
          x.request.contentType ?? 'application/json',
        );
      }
      const diffs = compareAnswer(x.response, got, EXCEPTIONS);
      if (
        x.response.raw &&
        JSON.stringify(x.response.raw.map((l) => l.slice(0, 12))) !==
          JSON.stringify((got.raw ?? []).map((l) => l.slice(0, 12)))
      )
        diffs.push(`status lines ${JSON.stringify(got.raw)} instead of ${JSON.stringify(x.response.raw)}`);
      const known = KNOWN_GAPS[x.name]?.diffs ?? [];
      unexpected.push(...diffs.filter((d) => !known.includes(d)).map((d) => `#${i} ${x.name}: ${d}`));
      closed.push(...known.filter((d) => !diffs.includes(d)).map((d) => `#${i} ${x.name}: ${d}`));
    }
    if (closed.length)
      console.warn(`known gaps that no longer differ (remove them from KNOWN_GAPS):\n${closed.join('\n')}`);
    expect(unexpected.join('\n')).toBe('');
  });
});
