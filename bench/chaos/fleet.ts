// The soak's fleet: the sandbox with 6 hypervisor nodes of 4 Nova servers each (and 3 VMIs), one
// in-process agent per node built as the daemon builds it, each behind its own cuttable connection
// to the API server so it can be killed (-9: no cleanup reaches the API) or cut off with the rest.
import { Writable } from 'node:stream';
import { configSchema, type Config } from '../../src/config/schema.ts';
import { createNodeAgent } from '../../src/core/agent/node-agent.ts';
import { createKubeClients, type KubeClients } from '../../src/kube/client.ts';
import { createLogger, type Logger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { buildPlugins } from '../../src/plugins/registry.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { startCuttableProxy, type CuttableProxy } from './proxy.ts';

export const FLEET_NODES = ['hv-1', 'hv-2', 'hv-3', 'hv-4', 'hv-5', 'hv-6'] as const;
const SERVERS_PER_NODE = 4;
const VMI_NODES = ['hv-1', 'hv-3', 'hv-5'];
/** Simulated seconds per real second: a 4-s migration takes 0.2 s. */
export const SCALE = 20;

export function fleetScenario() {
  return {
    name: 'chaos',
    clock: { scale: SCALE },
    timings: { podStartSeconds: 1 },
    nodes: FLEET_NODES.map((name) => ({ name })),
    openstack: {
      migrationSeconds: 4,
      hosts: FLEET_NODES.map((name) => ({ name, maxConcurrentLiveMigrations: 2, ramMb: 262_144 })),
      servers: FLEET_NODES.flatMap((host) =>
        Array.from({ length: SERVERS_PER_NODE }, (_, i) => ({
          name: `${host}-vm${i + 1}`,
          project: 'alpha',
          host,
          ramMb: 2048,
        })),
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
  server: { enabled: false },
  nova: { pollInterval: 0.05, retryBackoff: 0.1 },
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
  startAgent(node: string, instance?: string): Promise<FleetAgent>;
  /** A proxy that goes down with the API server (kubectl drains use it). */
  toolsProxy(): Promise<CuttableProxy>;
  /** Every cuttable connection to the API server (agents' and tools'). */
  proxies(): CuttableProxy[];
  close(): Promise<void>;
}

export async function startFleet(): Promise<Fleet> {
  const sandbox = await startSandbox({ scenario: fleetScenario(), scale: SCALE });
  const base = merge(sandbox.drainerConfig, SOAK_CONFIG);
  const config = configSchema.parse(base);
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

  const fleet: Fleet = {
    sandbox,
    config,
    k: createKubeClients({ kubeconfigYaml: sandbox.kube.kubeconfig() }),
    logLines,
    log,
    agents,
    skews,
    async startAgent(node, instance = `${node}-pod-${++started}`) {
      const proxy = await cuttable();
      const cfg = configSchema.parse(merge(base, { nodeName: node, instance }));
      const stop = new AbortController();
      const metrics = new Metrics({ defaultMetrics: false });
      const k = createKubeClients({ kubeconfigYaml: kubeconfigVia(proxy), onApiRequest: metrics.apiRequest });
      const plugins = buildPlugins(cfg, { log, metrics, kube: k });
      const { agent } = createNodeAgent({
        nodeName: node,
        config: cfg,
        k,
        plugins,
        log,
        signal: stop.signal,
        metrics,
        watch: { timeoutSeconds: 5, backoff: { initialMs: 50, maxMs: 500 }, recheckMs: 200 },
        backoff: { initialMs: 50, maxMs: 500 },
        now: () => new Date(Date.now() + (skews.get(node) ?? 0)),
        gateSleepMs: 100,
      });
      const running = agent.run().catch(() => undefined); // a lost Lease ends it
      const end = async (hard: boolean) => {
        forget(handle);
        if (hard) await proxy.close();
        stop.abort();
        await running;
        if (!hard) await proxy.close();
      };
      const handle: FleetAgent = { node, instance, kill: () => end(true), stop: () => end(false) };
      agents.set(node, [...(agents.get(node) ?? []), handle]);
      return handle;
    },
    toolsProxy: cuttable,
    proxies: () => [...proxies],
    async close() {
      await Promise.allSettled([...agents.values()].flat().map((a) => a.kill()));
      await Promise.allSettled([...proxies].map((p) => p.close()));
      await sandbox.close();
    },
  };
  return fleet;
}
