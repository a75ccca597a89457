// One drainer agent per sandbox node, in this process, wired as `drainer daemon` wires one
// (createNodeAgent with the registry's plugins), each with its own Kubernetes client and metrics.
import { configSchema, type Config } from '../config/schema.ts';
import type { Agent } from '../core/agent/agent.ts';
import { createNodeAgent } from '../core/agent/node-agent.ts';
import { createKubeClients } from '../kube/client.ts';
import type { Logger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import { buildPlugins } from '../plugins/registry.ts';

export interface DemoAgents {
  readonly agents: ReadonlyMap<string, Agent>;
  /** Every watch has listed once. */
  ready(): boolean;
  /** Stops every agent and waits for them (their records stay, as on SIGTERM). */
  stop(): Promise<void>;
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep merge of config input objects (b wins). */
export function mergeConfig(a: Plain, b: Plain): Plain {
  const out: Plain = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isPlain(v) && isPlain(out[k]) ? mergeConfig(out[k], v) : v;
  return out;
}

/**
 * The sandbox's drainer config, tuned for a fast clock: short polls and retries (real seconds),
 * no health server (several agents share the process), and what the caller adds.
 */
export function demoConfig(sandboxConfig: Plain, extra: Plain = {}): Plain {
  return mergeConfig(
    mergeConfig(sandboxConfig, {
      resyncInterval: 30,
      server: { enabled: false },
      // two in flight per host, as the sandbox's node-1 allows (Nova queues the rest itself)
      nova: { pollInterval: 0.2, retryBackoff: 0.5, maxConcurrentMigrations: 2 },
      kubevirt: { pollInterval: 0.2 },
      drain: { evictionRetryInterval: 0.5 },
    }),
    extra,
  );
}

export function startAgents(o: {
  nodes: readonly string[];
  config: Plain;
  kubeconfigYaml: string;
  log: Logger;
  signal: AbortSignal;
  /** Every API request of one node's agent (besides its metrics); `watch`: the path of a watch it opened. */
  onApiRequest?: (node: string, api: string, code: string, watch?: string, request?: string) => void;
  /** Watch tuning; default short server-side timeouts for a fast clock, `daemon`: the daemon's own. */
  watch?: 'daemon';
}): DemoAgents {
  const stop = new AbortController();
  const signal = AbortSignal.any([stop.signal, o.signal]);
  const agents = new Map<string, Agent>();
  const running: Promise<void>[] = [];
  for (const node of o.nodes) {
    const config: Config = configSchema.parse({ ...o.config, nodeName: node });
    const metrics = new Metrics({ defaultMetrics: false });
    const k = createKubeClients({
      kubeconfigYaml: o.kubeconfigYaml,
      onApiRequest: (api, code, watch, request) => {
        metrics.apiRequest(api, code);
        o.onApiRequest?.(node, api, code, watch, request);
      },
    });
    const log = o.log.child({ node });
    const plugins = buildPlugins(config, { log, metrics, kube: k });
    const { agent } = createNodeAgent({
      nodeName: node,
      config,
      k,
      plugins,
      log,
      signal,
      metrics,
      ...(o.watch === 'daemon'
        ? {}
        : { watch: { timeoutSeconds: 30, backoff: { initialMs: 100, maxMs: 2000 }, recheckMs: 500 } }),
      backoff: { initialMs: 200, maxMs: 2000 },
    });
    agents.set(node, agent);
    running.push(agent.run());
  }
  return {
    agents,
    ready: () => [...agents.values()].every((a) => a.ready().ready),
    stop: async () => {
      stop.abort();
      await Promise.allSettled(running);
    },
  };
}
