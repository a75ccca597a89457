// The soak's fleet: the sandbox with 7 hypervisor nodes of 4 Nova servers each (and 3 VMIs), one
// in-process agent per node built as the daemon builds it, each behind its own cuttable connection
// to the API server so it can be killed (-9: no cleanup reaches the API) or cut off with the rest.
// The names are mixed as real fleets mix them: one a prefix of another (hv-1, hv-1-b), and two of
// more than 63 characters that share their first 63 (a label value holds 63).
import { Writable } from 'node:stream';
import { configSchema, type Config } from '../../src/config/schema.ts';
import { REBOOT_KEY } from '../../src/names.ts';
import { MAINTENANCE_KEY } from '../../src/plugins/nova/policy.ts';
import { createNodeAgent } from '../../src/core/agent/node-agent.ts';
import { createKubeClients, type KubeClients } from '../../src/kube/client.ts';
import { createLogger, type Logger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { buildPlugins } from '../../src/plugins/registry.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { startCuttableProxy, type CuttableProxy } from './proxy.ts';

const LONG = `hv-rack-07-${'row-b-'.repeat(9)}chassis`; // 72 characters: both long names share more than 63
export const FLEET_NODES: readonly string[] = [
  'hv-1',
  'hv-1-b',
  'hv-2',
  'hv-3',
  'hv-4',
  `${LONG}-blade-1`,
  `${LONG}-blade-2`,
];
const SERVERS_PER_NODE = 4;
// a VMI's kubevirt.io/nodeName label holds at most 63 characters: VMIs run on the short names
const VMI_NODES = ['hv-1', 'hv-1-b', 'hv-3'];
/** Nodes whose maintenance is a declared reboot (drainer.dev/reboot): a `stop` server may stay on them, stopped. */
export const REBOOT_NODES: readonly string[] = ['hv-2', 'hv-4'];
/** Nodes with a server whose owner wants to be asked (way out `notify`). */
const NOTIFY_NODES = ['hv-2', 'hv-3', `${LONG}-blade-2`];

/**
 * Each server's way out as its owner set it (drainer.dev:maintenance), by name: the second server of
 * each node cold, the third `stop` where the maintenance is a reboot, the fourth `notify` on a few.
 */
export function serverWays(): Map<string, string> {
  const ways = new Map<string, string>();
  for (const host of FLEET_NODES) {
    ways.set(`${host}-vm2`, 'cold');
    if (REBOOT_NODES.includes(host)) ways.set(`${host}-vm3`, 'stop');
    if (NOTIFY_NODES.includes(host)) ways.set(`${host}-vm4`, 'notify');
  }
  return ways;
}

/** Real ms before the kubelet starts an exited agent's container again (its first back-off is 10 s; the soak's clock is faster). */
const RESTART_MS = 1000;

/** Simulated seconds per real second: a 4-s migration takes 0.2 s. */
export const SCALE = 20;

export function fleetScenario() {
  const ways = serverWays();
  return {
    name: 'chaos',
    clock: { scale: SCALE },
    timings: { podStartSeconds: 1 },
    nodes: FLEET_NODES.map((name) => ({
      name,
      ...(REBOOT_NODES.includes(name) ? { labels: { [REBOOT_KEY]: 'true' } } : {}),
    })),
    openstack: {
      migrationSeconds: 4,
      hosts: FLEET_NODES.map((name) => ({ name, maxConcurrentLiveMigrations: 2, ramMb: 262_144 })),
      servers: FLEET_NODES.flatMap((host) =>
        Array.from({ length: SERVERS_PER_NODE }, (_, i) => {
          const way = ways.get(`${host}-vm${i + 1}`);
          return {
            name: `${host}-vm${i + 1}`,
            project: 'alpha',
            host,
            ramMb: 2048,
            ...(way ? { metadata: { [MAINTENANCE_KEY]: way } } : {}),
          };
        }),
      ),
    },
    kubevirt: {
      installed: true,
      migrationSeconds: 4,
      vmis: VMI_NODES.map((node) => ({
        name: `vmi-${node}`,
        namespace: 'vms',
        node,
        evictionStrategy: 'LiveMigrate' as const,
      })),
    },
    daemonsets: [{ name: 'node-agent', namespace: 'kube-system' }],
    replicasets: [{ name: 'web', namespace: 'shop', replicas: 6, labels: { app: 'web' } }],
  };
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);
function merge(a: Plain, b: Plain): Plain {
  const out: Plain = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isPlain(v) && isPlain(out[k]) ? merge(out[k], v) : v;
  return out;
}

/** The agents' settings: the sandbox's, with real-time timers short enough for a round of a second or two. */
const SOAK_CONFIG: Plain = {
  logLevel: 'info',
  resyncInterval: 3,
  // a server drainer stopped that its owner moved onto a node in service after the record was lost
  strandedCheckInterval: 9,
  server: { enabled: false },
  // an owner asked (notify) gets 3 s (a minute of the scenario's time) before drainer moves the server itself
  nova: { pollInterval: 0.05, retryBackoff: 0.1, notifyTimeout: 3 },
  drain: { evictionRetryInterval: 0.1, timeout: 20 },
  kubevirt: { pollInterval: 0.05 },
  fleet: { maxConcurrentEvacuations: 2, leaseDuration: 3, agentLeaseDuration: 6 },
};

export interface FleetAgent {
  readonly node: string;
  readonly instance: string;
  /** kill -9: its connections are reset and refused from now on, then its loops are stopped. */
  kill(): Promise<void>;
  /** SIGTERM: it stops as the daemon does (gives its Leases back), then its connection closes. */
  stop(): Promise<void>;
}

export interface Fleet {
  readonly sandbox: Sandbox;
  readonly config: Config;
  /** Reads for the checks (straight to the API server, never cut). */
  readonly k: KubeClients;
  readonly logLines: string[];
  readonly log: Logger;
  /** The running agents per node (two during a rollout's overlap). */
  readonly agents: Map<string, FleetAgent[]>;
  /** Per node, how far its agents' clock is off (ms). */
  readonly skews: Map<string, number>;
  /** Nodes whose agent the operator took off (drainer.dev/agent=disabled): the DaemonSet runs none there. */
  readonly disabled: Set<string>;
  /** Of those, the ones with VMs on the node just after its agent stopped (it kept the gate for them). */
  readonly offWithVms: Set<string>;
  /** Of those, the ones whose gate pod or PDB the operator deleted since: no agent re-creates it. */
  readonly gateDeletedOff: Set<string>;
  /**
   * Per node, when (sandbox clock) its agent last came back after the operator had taken it off with
   * nothing on the node: until that agent's gate holds, the node has none, by the operator's choice.
   */
  readonly backFromOff: Map<string, number>;
  startAgent(node: string, instance?: string): Promise<FleetAgent>;
  /** A proxy that goes down with the API server (kubectl drains use it). */
  toolsProxy(): Promise<CuttableProxy>;
  /** Every cuttable connection to the API server (agents' and tools'). */
  proxies(): CuttableProxy[];
  close(): Promise<void>;
}

/** The node label that takes drainer's agent off a node (docs/operations.md, the affinity patch). */
export const AGENT_LABEL = 'drainer.dev/agent';

/**
 * drainer's DaemonSet as the install makes it, with the documented affinity that keeps it off nodes
 * labelled drainer.dev/agent=disabled (the agents own their gate PDBs by it). No pods: the agents run
 * in-process, and the soak stops and starts them as the DaemonSet controller would.
 */
export const agentDaemonSet = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name, labels: { 'app.kubernetes.io/name': 'drainer' } },
  spec: {
    selector: { matchLabels: { 'app.kubernetes.io/name': 'drainer' } },
    template: {
      metadata: { labels: { 'app.kubernetes.io/name': 'drainer' } },
      spec: {
        containers: [{ name: 'agent', image: 'drainer:soak' }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: AGENT_LABEL, operator: 'NotIn', values: ['disabled'] }] },
              ],
            },
          },
        },
      },
    },
  },
});

export async function startFleet(): Promise<Fleet> {
  const sandbox = await startSandbox({ scenario: fleetScenario(), scale: SCALE });
  const base = merge(sandbox.drainerConfig, SOAK_CONFIG);
  const config = configSchema.parse(base);
  sandbox.kube.store.create('daemonsets.apps', {
    ...agentDaemonSet(config.fleet.daemonSet),
    metadata: { ...agentDaemonSet(config.fleet.daemonSet).metadata, namespace: config.fleet.namespace },
  });
  const logLines: string[] = [];
  const log = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk: Buffer, _e, cb) {
        logLines.push(chunk.toString());
        cb();
      },
    }),
  });
  const agents = new Map<string, FleetAgent[]>();
  const skews = new Map<string, number>();
  const disabled = new Set<string>();
  const offWithVms = new Set<string>();
  const gateDeletedOff = new Set<string>();
  const backFromOff = new Map<string, number>();
  const proxies = new Set<CuttableProxy>();
  let started = 0;
  const kubeconfigVia = (proxy: CuttableProxy) =>
    sandbox.kube.kubeconfig().split(sandbox.kube.url).join(proxy.url);
  const cuttable = async (): Promise<CuttableProxy> => {
    const p = await startCuttableProxy(sandbox.kube.url);
    const tracked: CuttableProxy = {
      ...p,
      drop: () => p.drop(),
      down: (ms) => p.down(ms),
      close: async () => {
        proxies.delete(tracked);
        await p.close();
      },
    };
    proxies.add(tracked);
    return tracked;
  };
  const forget = (a: FleetAgent) =>
    agents.set(
      a.node,
      (agents.get(a.node) ?? []).filter((x) => x !== a),
    );

  let closing = false;
  const fleet: Fleet = {
    sandbox,
    config,
    k: createKubeClients({ kubeconfigYaml: sandbox.kube.kubeconfig() }),
    logLines,
    log,
    agents,
    skews,
    disabled,
    offWithVms,
    gateDeletedOff,
    backFromOff,
    async startAgent(node, instance = `${node}-pod-${++started}`) {
      const proxy = await cuttable();
      const cfg = configSchema.parse(merge(base, { nodeName: node, instance }));
      const stop = new AbortController();
      const metrics = new Metrics({ defaultMetrics: false });
      const k = createKubeClients({ kubeconfigYaml: kubeconfigVia(proxy), onApiRequest: metrics.apiRequest });
      // each line names the agent that wrote it (two run during a rollout's overlap)
      const agentLog = log.child({ instance });
      const plugins = buildPlugins(cfg, { log: agentLog, metrics, kube: k });
      const { agent } = createNodeAgent({
        nodeName: node,
        config: cfg,
        k,
        plugins,
        log: agentLog,
        signal: stop.signal,
        metrics,
        watch: { timeoutSeconds: 5, backoff: { initialMs: 50, maxMs: 500 }, recheckMs: 200 },
        backoff: { initialMs: 50, maxMs: 500 },
        now: () => new Date(Date.now() + (skews.get(node) ?? 0)),
        gateSleepMs: 100,
      });
      let ended = false;
      const running = agent.run().catch(() => undefined); // a lost Lease ends it
      const end = async (hard: boolean) => {
        ended = true;
        forget(handle);
        if (hard) await proxy.close();
        stop.abort();
        await running;
        if (!hard) await proxy.close();
      };
      const handle: FleetAgent = { node, instance, kill: () => end(true), stop: () => end(false) };
      agents.set(node, [...(agents.get(node) ?? []), handle]);
      // an agent that stops acting by itself (it lost its Lease) exits, and the kubelet starts its
      // container again in the same pod, as for any DaemonSet pod (restartPolicy Always)
      void running.then(async () => {
        if (ended || closing) return;
        await end(true);
        await new Promise((r) => setTimeout(r, RESTART_MS));
        if (!closing && !disabled.has(node)) await fleet.startAgent(node, instance).catch(() => undefined);
      });
      return handle;
    },
    toolsProxy: cuttable,
    proxies: () => [...proxies],
    async close() {
      closing = true;
      await Promise.allSettled([...agents.values()].flat().map((a) => a.kill()));
      await Promise.allSettled([...proxies].map((p) => p.close()));
      await sandbox.close();
    },
  };
  return fleet;
}
