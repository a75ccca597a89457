// Scenario 5: the daemon's cost at rest, on the bundle the image runs (scripts/build.ts, built into a
// temporary dir first). Four child processes `node <bundle>/cli.js daemon` run idle side by side: in
// pod mode (the ServiceAccount token and CA, no client-node) and with a kubeconfig (client-node), each
// in a 5-node cluster and in one of 5,000 nodes and 50,000 pods (written straight into the in-process
// store). The sandbox's API server speaks TLS and wants a bearer token, as a real one does. API traffic
// goes through counting loopback proxies. The simulated controllers are off: nothing changes in an
// idle cluster. Its daemons: footprint-daemons.ts; its figures and notes: footprint-report.ts.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import yaml from 'js-yaml';
import { buildBundle } from '../../scripts/build.ts';
import { nodeObject, podObject, replicaSetObject } from '../../src/sandbox/scenario-objects.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { importCost, type ImportCost } from '../lib/imports.ts';
import { sleep } from '../lib/wait.ts';
import {
  closeWindow,
  NODE,
  openWindow,
  refuseNextTo,
  SMALL_NODES,
  startRepeated,
  startSubject,
  stopSubject,
  TOKEN,
  type FootprintOptions,
  type FootprintSample,
  type KubeMode,
  type Refusal,
  type Subject,
} from './footprint-daemons.ts';
import { footprintFigures, type FootprintResult } from './footprint-report.ts';

const scenario = {
  name: 'bench-footprint',
  nodes: Array.from({ length: SMALL_NODES }, (_, i) => ({ name: `node-${i + 1}` })),
  openstack: { hosts: [{ name: NODE }, { name: 'node-2' }] },
  kubevirt: { installed: false },
  replicasets: [{ name: 'web', namespace: 'shop', replicas: 10, labels: { app: 'web' } }],
};

const NO_CONTROLLERS = {
  kubelet: false,
  replicaset: false,
  disruption: false,
  nodeLifecycle: false,
  kubevirt: false,
};

/** Grows the cluster to `nodes` nodes and `pods` more pods, straight into the store. */
function grow(sandbox: Sandbox, nodes: number, pods: number): number {
  const t = performance.now();
  const store = sandbox.kube.store;
  const now = new Date(sandbox.clock.now()).toISOString();
  for (let i = SMALL_NODES; i < nodes; i++)
    store.createRef(
      'nodes',
      nodeObject({ name: `node-${i + 1}`, labels: {}, taints: [], unschedulable: false }, i, now),
    );
  const shape = { namespace: 'shop', labels: { app: 'bulk' }, emptyDir: false, graceSeconds: 30 };
  const owner = store.create('replicasets.apps', replicaSetObject('bulk', { ...shape, replicas: pods }, {}));
  for (let i = 0; i < pods; i++) {
    const pod = podObject({ ...shape, name: `bulk-${i}` }, `node-${(i % nodes) + 1}`, owner);
    pod.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], podIP: '10.0.0.1' };
    store.createRef('pods', pod);
  }
  return (performance.now() - t) / 1000;
}

/**
 * The daemons start one after the other (each start alone on the machine), then share one idle
 * window, so whatever else the machine does weighs on all alike. Then run-once is refused beside one.
 */
async function measureSideBySide(
  small: Sandbox,
  big: Sandbox,
  o: FootprintOptions,
  entry: string,
  nodeOptions: Record<KubeMode, string>,
): Promise<{ samples: FootprintSample[]; refusal: Refusal }> {
  const subjects: Subject[] = [];
  try {
    // One unmeasured start first: the sandbox's API server and the proxies run in this process, and
    // their first TLS handshakes, lists and watches (cold code) would otherwise count in the first
    // daemon's start → ready, by 50-150 ms; a real API server is warm.
    await stopSubject(await startSubject(small, o, SMALL_NODES, 'pod', entry, nodeOptions));
    for (const mode of ['pod', 'kubeconfig'] as const) {
      subjects.push(await startRepeated(small, o, SMALL_NODES, mode, entry, nodeOptions));
      subjects.push(await startRepeated(big, o, o.bigNodes, mode, entry, nodeOptions));
    }
    subjects.push(await startSubject(small, o, SMALL_NODES, 'exec', entry, nodeOptions));
    await sleep(o.settleMs);
    const windows = await Promise.all(subjects.map(openWindow));
    await sleep(o.idleMs);
    const out: FootprintSample[] = [];
    for (const [i, s] of subjects.entries()) {
      const w = windows[i];
      if (!w) throw new Error('bench footprint: a daemon did not start');
      out.push(await closeWindow(s, w));
    }
    const beside = subjects.find((s) => s.mode === 'kubeconfig' && s.nodes === SMALL_NODES);
    if (!beside) throw new Error('bench footprint: no kubeconfig-mode agent to refuse beside');
    return { samples: out, refusal: await refuseNextTo(beside, entry, o.repo) };
  } finally {
    for (const s of subjects) await stopSubject(s);
  }
}

/**
 * NODE_OPTIONS as shipped, so the daemons run as deployed: the DaemonSet's (pod mode) and the image's
 * (Dockerfile ENV; what a kubeconfig user of the image gets).
 */
async function shippedNodeOptions(repo: string): Promise<Record<KubeMode, string>> {
  const dockerfile = await readFile(path.join(repo, 'Dockerfile'), 'utf8');
  const image = /^ENV NODE_OPTIONS=(.*)$/m.exec(dockerfile)?.[1]?.trim() ?? '';
  const ds = yaml.load(await readFile(path.join(repo, 'daemonset', 'daemonset.yaml'), 'utf8')) as {
    spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
  };
  const env = ds.spec.template.spec.containers[0]?.env ?? [];
  return { pod: env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? image, kubeconfig: image, exec: image };
}

/** Builds the bundle inside the repository (so it resolves node_modules as dist/ does). */
async function bundle(repo: string): Promise<{ dir: string; entry: string; daemonChunk: string }> {
  await mkdir(path.join(repo, 'node_modules', '.cache'), { recursive: true });
  const dir = await mkdtemp(path.join(repo, 'node_modules', '.cache', 'drainer-bench-dist-'));
  const meta = await buildBundle(dir);
  const daemonOut = Object.entries(meta.outputs).find(([, out]) => out.entryPoint === 'src/cli/daemon.ts');
  if (!daemonOut) throw new Error('bench footprint: the bundle has no daemon chunk');
  // metafile paths are relative to the repository
  return { dir, entry: path.join(dir, 'cli.js'), daemonChunk: `./${daemonOut[0]}` };
}

export async function footprint(o: FootprintOptions): Promise<FootprintResult> {
  const built = await bundle(o.repo);
  const nodeOptions = await shippedNodeOptions(o.repo);
  const sandboxOptions = {
    scenario,
    scale: 1,
    controllers: NO_CONTROLLERS,
    kubeTls: true,
    kubeToken: TOKEN,
  };
  const smallSandbox = await startSandbox(sandboxOptions);
  const bigSandbox = await startSandbox(sandboxOptions).catch(async (e: unknown) => {
    await smallSandbox.close();
    throw e;
  });
  try {
    const growSeconds = grow(bigSandbox, o.bigNodes, o.bigPods);
    const { samples, refusal } = await measureSideBySide(
      smallSandbox,
      bigSandbox,
      o,
      built.entry,
      nodeOptions,
    );
    const [small, big, kcSmall, kcBig, exec] = samples;
    if (refusal.code !== 2)
      throw new Error(
        `bench footprint: run-once beside a live agent exited ${refusal.code}: ${refusal.stderr}`,
      );
    if (!small || !big || !kcSmall || !kcBig || !exec)
      throw new Error('bench footprint: a daemon is missing');
    const imports: ImportCost[] = [];
    for (const m of ['', '@kubernetes/client-node', built.daemonChunk])
      imports.push(await importCost(o.repo, m, nodeOptions.pod));
    const result = { small, big, kcSmall, kcBig, exec, growSeconds, nodeOptions, imports, refusal };
    return { ...result, figures: footprintFigures(result, o) };
  } finally {
    await Promise.allSettled([smallSandbox.close(), bigSandbox.close()]);
    await rm(built.dir, { recursive: true, force: true });
  }
}
