// The agent on a real-logind host (host.ts) beside the sandbox's Kubernetes and Nova (test/e2e/stack.ts),
// wired as the daemon wires it: the node agent, and the shutdown trigger on the host's system bus. A
// "reboot" ends systemd in the namespace; the agent goes down with its host (downWithHost), and the
// "boot" is a new host and a new agent (bootAgain).
import { startShutdownTrigger } from '../../src/cli/shutdown.ts';
import { configSchema } from '../../src/config/schema.ts';
import type { RunningAgent, Stack } from '../e2e/stack.ts';
import { until } from '../e2e/stack.ts';
import { bootHost, type Host } from './host.ts';

export const NODE = 'node-a';

export interface AgentOnHost {
  readonly host: Host;
  readonly agent: RunningAgent;
  /** The agent and its trigger stop, as its pod does when the host goes down. */
  down(): Promise<void>;
}

/** Boots a host whose logind caps delay locks at delaySec, and runs the agent and its trigger on it. */
export async function agentOnHost(stack: Stack, delaySec: number): Promise<AgentOnHost> {
  const host = await bootHost(delaySec);
  const agent = stack.startAgent(NODE);
  await until('agent ready', () => agent.agent.ready().ready);
  const ac = new AbortController();
  const config = configSchema.parse({
    ...stack.config,
    shutdown: { busSocket: host.socketPath, inhibitCommand: host.inhibitCommand },
  });
  await startShutdownTrigger({
    config,
    nodeName: NODE,
    k: stack.k,
    plugins: agent.plugins, // one set per pod, as the daemon shares them
    log: stack.log,
    signal: ac.signal,
  });
  return {
    host,
    agent,
    down: async () => {
      ac.abort();
      await agent.stop();
      await host.stop();
    },
  };
}

/** True once logind lists drainer's delay lock. */
export const lockListed = (host: Host): boolean =>
  /drainer/.test(host.run('systemd-inhibit', '--list', '--no-pager').stdout);

/** The message of the first log line that matches, or ''. */
export function lineOf(stack: Stack, msg: RegExp): string {
  for (const line of stack.logLines) {
    const l = JSON.parse(line) as { msg?: string };
    if (l.msg && msg.test(l.msg)) return l.msg;
  }
  return '';
}

/** The time of the first log line whose message matches (ms since the epoch), or NaN. */
export function timeOf(stack: Stack, msg: RegExp): number {
  for (const line of stack.logLines) {
    const l = JSON.parse(line) as { time?: string; msg?: string };
    if (l.msg && msg.test(l.msg)) return Date.parse(l.time ?? '');
  }
  return NaN;
}

/** The field of the first log line whose message matches. */
export function fieldOf(stack: Stack, msg: RegExp, field: string): unknown {
  for (const line of stack.logLines) {
    const l = JSON.parse(line) as Record<string, unknown>;
    if (typeof l.msg === 'string' && msg.test(l.msg)) return l[field];
  }
  return undefined;
}
