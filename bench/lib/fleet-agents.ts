// A child process of the fleet-real bench: many real agents (src/demo/agents.ts, wired as `drainer
// daemon` wires one, the daemon's watch settings), each with its own Kubernetes client, watches,
// Lease and plugins; nothing is shared between them that separate pods would not share (the
// process, its event loop and its memory are). Driven over IPC: `start` once, then `stats` (RSS,
// CPU, agents ready, each agent's Kubernetes requests with their times), then `stop`.
import { startAgents, type DemoAgents } from '../../src/demo/agents.ts';
import { createLogger } from '../../src/observability/logger.ts';

export interface AgentsStart {
  readonly type: 'start';
  readonly nodes: readonly string[];
  readonly config: Record<string, unknown>;
  readonly kubeconfigYaml: string;
}

export interface AgentsStats {
  readonly type: 'stats';
  readonly agents: number;
  readonly ready: number;
  readonly rssBytes: number;
  /** User + system CPU seconds since the process started. */
  readonly cpuSeconds: number;
  /** Per node: when (epoch ms) each of its agent's Kubernetes requests was answered. */
  readonly requests: Record<string, number[]>;
  /** Per node and watched path: when its agent opened that watch (also counted in `requests`). */
  readonly watches: Record<string, Record<string, number[]>>;
}

type Message = AgentsStart | { readonly type: 'stats' } | { readonly type: 'stop' };

const stop = new AbortController();
let agents: DemoAgents | undefined;
const requests: Record<string, number[]> = {};
const watches: Record<string, Record<string, number[]>> = {};

function stats(): AgentsStats {
  const cpu = process.cpuUsage();
  const all = agents ? [...agents.agents.values()] : [];
  return {
    type: 'stats',
    agents: all.length,
    ready: all.filter((a) => a.ready().ready).length,
    rssBytes: process.memoryUsage().rss,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    requests,
    watches,
  };
}

process.on('message', (m: Message) => {
  if (m.type === 'start') {
    for (const n of m.nodes) {
      requests[n] = [];
      watches[n] = {};
    }
    agents = startAgents({
      nodes: m.nodes,
      config: m.config,
      kubeconfigYaml: m.kubeconfigYaml,
      log: createLogger({ level: 'silent' }),
      signal: stop.signal,
      watch: 'daemon',
      onApiRequest: (node, api, _code, watch) => {
        if (api !== 'kubernetes') return;
        requests[node]?.push(Date.now());
        const w = watches[node];
        if (watch !== undefined && w) (w[watch] ??= []).push(Date.now());
      },
    });
    process.send?.({ type: 'started' });
  } else if (m.type === 'stats') process.send?.(stats());
  else {
    stop.abort();
    void (agents?.stop() ?? Promise.resolve()).then(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));
