// The full stack for scenario tests: the sandbox (Kubernetes API with simulated controllers,
// Keystone+Nova) plus one drainer agent per node, built exactly as the daemon builds them.
import { Writable } from 'node:stream';
import { configSchema, type Config } from '../../src/config/schema.ts';
import type { Agent } from '../../src/core/agent.ts';
import { createNodeAgent } from '../../src/core/node-agent.ts';
import { parseRecord, STATE_ANNOTATION, type NodeRecord } from '../../src/core/record.ts';
import { createKubeClients, type KubeClients } from '../../src/kube/client.ts';
import type { KubeList, KubeNode, KubeObject } from '../../src/kube/types.ts';
import { createLogger, type Logger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { buildPlugins } from '../../src/plugins/registry.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';

const MERGE = 'application/merge-patch+json';

export type EventObject = KubeObject & {
  reason: string;
  message: string;
  count?: number;
  involvedObject: { kind: string; name: string };
};

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);
function merge(a: Plain, b: Plain): Plain {
  const out: Plain = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isPlain(v) && isPlain(out[k]) ? merge(out[k], v) : v;
  return out;
}

export interface RunningAgent {
  readonly agent: Agent;
  /** The holder of the node's Lease (config instance). */
  readonly instance: string;
  readonly metrics: Metrics;
  /** SIGTERM: stop and wait until it has stopped. */
  stop(): Promise<void>;
}

export interface Stack {
  readonly sandbox: Sandbox;
  readonly k: KubeClients;
  readonly config: Config;
  /** Every log line of every agent (for the no-secrets check). */
  readonly logLines: string[];
  readonly log: Logger;
  startAgent(node: string, overrides?: Plain): RunningAgent;
  node(name: string): Promise<KubeNode>;
  record(name: string): Promise<NodeRecord | undefined>;
  cordon(name: string, on?: boolean): Promise<void>;
  close(): Promise<void>;
}

export async function startStack(
  opts: {
    scenario?: string | object;
    scale?: number;
    config?: Plain;
    controllers?: Record<string, boolean>;
    /** The agents' clock (windows, freezes, records); the test moves it. */
    now?: () => Date;
  } = {},
): Promise<Stack> {
  const sandbox = await startSandbox({
    ...(opts.scenario ? { scenario: opts.scenario } : {}),
    scale: opts.scale ?? 20,
    ...(opts.controllers ? { controllers: opts.controllers } : {}),
  });
  const base = merge(sandbox.drainerConfig, {
    logLevel: 'debug',
    resyncInterval: 30,
    server: { enabled: false },
    nova: { pollInterval: 0.05, retryBackoff: 0.1 },
    drain: { evictionRetryInterval: 0.1, timeout: 20 },
    kubevirt: { pollInterval: 0.05 },
    ...opts.config,
  });
  const config = configSchema.parse(base);
  const k = createKubeClients({ kubeconfigYaml: sandbox.kube.kubeconfig() });
  const logLines: string[] = [];
  const log = createLogger({
    level: 'debug',
    destination: new Writable({
      write(chunk: Buffer, _e, cb) {
        logLines.push(chunk.toString());
        cb();
      },
    }),
  });
  const agents: RunningAgent[] = [];
  let started = 0;
  const stack: Stack = {
    sandbox,
    k,
    config,
    logLines,
    log,
    startAgent(node, overrides = {}) {
      // each agent is its own instance (as each pod is): a second agent for a node is a second holder
      const instance = `${node}-agent-${++started}`;
      const cfg = configSchema.parse(merge(base, { nodeName: node, instance, ...overrides }));
      const stop = new AbortController();
      const metrics = new Metrics({ defaultMetrics: false });
      const agentK = createKubeClients({
        kubeconfigYaml: sandbox.kube.kubeconfig(),
        onApiRequest: metrics.apiRequest,
      });
      const plugins = buildPlugins(cfg, { log, metrics, kube: agentK });
      const { agent } = createNodeAgent({
        nodeName: node,
        config: cfg,
        k: agentK,
        plugins,
        log,
        signal: stop.signal,
        metrics,
        watch: { timeoutSeconds: 5, backoff: { initialMs: 50, maxMs: 500 }, recheckMs: 200 },
        backoff: { initialMs: 50, maxMs: 500 },
        ...(opts.now ? { now: opts.now } : {}),
        gateSleepMs: 100,
      });
      const running = agent.run();
      running.catch(() => undefined); // a lost Lease ends it; stop() reports it
      const handle: RunningAgent = {
        agent,
        instance: cfg.instance ?? instance,
        metrics,
        stop: async () => {
          stop.abort();
          await running;
        },
      };
      agents.push(handle);
      return handle;
    },
    node: (name) => k.request<KubeNode>({ path: `/api/v1/nodes/${name}` }),
    async record(name) {
      const n = await stack.node(name);
      return parseRecord(n.metadata.annotations?.[STATE_ANNOTATION]);
    },
    async cordon(name, on = true) {
      await k.request({
        method: 'PATCH',
        path: `/api/v1/nodes/${name}`,
        contentType: MERGE,
        body: { spec: { unschedulable: on ? true : null } },
      });
    },
    async close() {
      await Promise.allSettled(agents.map((a) => a.stop()));
      await sandbox.close();
    },
  };
  return stack;
}

/** Polls until check answers truthy; fails naming what never happened. */
export async function until<T>(
  what: string,
  check: () => T | Promise<T>,
  ms = 12_000,
): Promise<NonNullable<Awaited<T>>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Waits until the node's evacuation has ended, Evacuated or Failed; a failed read counts as not yet. */
export const finished = (stack: Stack, node: string): Promise<NodeRecord> =>
  until(`${node} finished`, async () => {
    const r = await stack.record(node).catch(() => undefined);
    return r?.phase === 'Evacuated' || r?.phase === 'Failed' ? r : undefined;
  });

/** The messages of the node's Events with this reason. */
export async function nodeEvents(s: Stack, node: string, reason: string): Promise<string[]> {
  const events = await s.k.request<KubeList<EventObject>>({ path: '/api/v1/namespaces/default/events' });
  return events.items
    .filter((e) => e.involvedObject.name === node && e.reason === reason)
    .map((e) => e.message);
}
