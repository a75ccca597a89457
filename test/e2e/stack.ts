// The full stack for scenario tests: the sandbox (Kubernetes API with simulated controllers,
// Keystone+Nova) plus one drainer agent per node, built exactly as the daemon builds them.
import { Writable } from 'node:stream';
import { configSchema, type Config } from '../../src/config/schema.ts';
import type { Agent } from '../../src/core/agent/agent.ts';
import type { BackendPlugin } from '../../src/core/backends/plugin.ts';
import { createNodeAgent } from '../../src/core/agent/node-agent.ts';
import { parseRecord, STATE_ANNOTATION, type NodeRecord } from '../../src/core/record/record.ts';
import { createKubeClients, type KubeClients } from '../../src/kube/client.ts';
import type { KubeList, KubeNode, KubeObject } from '../../src/kube/types.ts';
import { createLogger, type Logger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { buildPlugins } from '../../src/plugins/registry.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { checkInvariants } from '../../src/invariants/check.ts';
import { checkOptionsOf } from '../../src/invariants/options.ts';
import { OPERATOR_FINDINGS, type InvariantId, type Violation } from '../../src/invariants/violation.ts';
import type { World } from '../../src/invariants/world.ts';
import { readSandboxWorld } from '../../src/sandbox/world.ts';

export const MERGE = 'application/merge-patch+json';

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
  readonly node: string;
  /** The holder of the node's Lease (config instance). */
  readonly instance: string;
  readonly metrics: Metrics;
  /** Its plugins: the daemon's shutdown trigger shares them (a fallback holds the evacuation's moves). */
  readonly plugins: readonly BackendPlugin[];
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
  /** `agent.now`: this agent's own clock (a skewed machine), else the stack's. */
  startAgent(node: string, overrides?: Plain, agent?: { now?: () => Date }): RunningAgent;
  node(name: string): Promise<KubeNode>;
  record(name: string): Promise<NodeRecord | undefined>;
  cordon(name: string, on?: boolean): Promise<void>;
  /** The World now: the sandbox's objects and Nova, the API server's answers, the agents' log and metrics. */
  world(): Promise<World>;
  /** drainer's promises broken now (issue 28 item 3); left out: those marked broken for this story, and operator findings (a record whose agent was stopped). */
  violations(): Promise<Violation[]>;
  /**
   * This story breaks that promise because of a known bug another change fixes: its end-of-story
   * check leaves that invariant out. Name the issue item in `why`; remove the mark with the fix.
   */
  expectBroken(id: InvariantId, why: string): void;
  /** A 4xx this story provokes on purpose (an injected fault, a refused token): not a finding. */
  expect4xx(code: number, why: string): void;
  /** Fails naming every broken promise, after letting state settle for a few seconds. */
  assertPromisesKept(): Promise<void>;
  /** Checks the promises (assertPromisesKept), then stops the agents and the sandbox; fails after closing if one was broken. */
  close(): Promise<void>;
}

/** How long the end-of-story check lets state settle (a status written a moment after the record). */
const SETTLE_MS = 5_000;

const violationText = (v: Violation): string => `  - ${v.id} ${v.object}: ${v.evidence}`;

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
  const running = new Set<RunningAgent>();
  const broken = new Map<InvariantId, string>();
  const expected4xx = new Map<number, string>();
  let started = 0;
  const stack: Stack = {
    sandbox,
    k,
    config,
    logLines,
    log,
    startAgent(node, overrides = {}, own = {}) {
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
        ...((own.now ?? opts.now) ? { now: own.now ?? opts.now } : {}),
        gateSleepMs: 100,
      });
      const done = agent.run();
      done.catch(() => undefined); // a lost Lease ends it; stop() reports it
      const handle: RunningAgent = {
        agent,
        node,
        instance: cfg.instance ?? instance,
        metrics,
        plugins,
        stop: async () => {
          stop.abort();
          running.delete(handle);
          await done;
        },
      };
      agents.push(handle);
      running.add(handle);
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
    async world() {
      // each node's metrics from its newest running agent
      const metrics: Record<string, string> = {};
      for (const a of running) metrics[a.node] = await a.metrics.text();
      return readSandboxWorld(sandbox, k, {
        namespace: config.fleet.namespace,
        observations: { logLines: [...logLines], metrics },
      });
    },
    async violations() {
      const world = await stack.world();
      const opts = checkOptionsOf(config, world.nodes.length, { expected4xx: [...expected4xx.keys()] });
      return checkInvariants(world, opts).filter((v) => !broken.has(v.id) && !OPERATOR_FINDINGS.has(v.id));
    },
    expectBroken(id, why) {
      broken.set(id, why);
    },
    expect4xx(code, why) {
      expected4xx.set(code, why);
    },
    async assertPromisesKept() {
      const end = Date.now() + SETTLE_MS;
      let found = await stack.violations();
      while (found.length && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 250));
        found = await stack.violations();
      }
      if (found.length)
        throw new Error(
          `${found.length} of drainer's promises broken at the end of this story (issue 28):\n${found.map(violationText).join('\n')}`,
        );
    },
    async close() {
      let failure: Error | undefined;
      try {
        await stack.assertPromisesKept();
      } catch (e) {
        failure = e instanceof Error ? e : new Error(String(e));
      }
      await Promise.allSettled(agents.map((a) => a.stop()));
      await sandbox.close();
      if (failure) throw failure;
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
