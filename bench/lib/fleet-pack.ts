// The fleet-real bench's agents: child processes of fleet-agents.ts, many real agents each, driven
// over IPC; and what the agents' own counts say (each request and each watch opened, with its time).
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentsStats } from './fleet-agents.ts';
import { until } from './wait.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface Pack {
  readonly children: ChildProcess[];
  stats(): Promise<AgentsStats[]>;
  stop(): Promise<void>;
}

function ask<T>(c: ChildProcess, msg: object, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: { type?: string }) => {
      if (m.type !== type) return;
      c.off('message', on);
      c.off('exit', exited);
      resolve(m as T);
    };
    const exited = (code: number | null) => {
      c.off('message', on);
      reject(new Error(`agent process exited (${code}) before answering ${type}`));
    };
    c.on('message', on);
    c.once('exit', exited);
    c.send(msg);
  });
}

export async function startPack(
  nodes: readonly string[],
  perProcess: number,
  config: Record<string, unknown>,
  kubeconfigYaml: string,
): Promise<Pack> {
  const children: ChildProcess[] = [];
  for (let i = 0; i < nodes.length; i += perProcess) {
    const c = fork(path.join(HERE, 'fleet-agents.ts'), [], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      // one process holds many agents' sockets and heaps
      execArgv: ['--max-old-space-size=4096'],
    });
    children.push(c);
    await ask(c, { type: 'start', nodes: nodes.slice(i, i + perProcess), config, kubeconfigYaml }, 'started');
  }
  return {
    children,
    stats: () => Promise.all(children.map((c) => ask<AgentsStats>(c, { type: 'stats' }, 'stats'))),
    async stop() {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null) return resolve();
              const t = setTimeout(() => c.kill('SIGKILL'), 30_000);
              c.once('exit', () => {
                clearTimeout(t);
                resolve();
              });
              c.send({ type: 'stop' });
            }),
        ),
      );
    },
  };
}

export const sumStats = (s: readonly AgentsStats[]) => ({
  ready: s.reduce((a, x) => a + x.ready, 0),
  rss: s.reduce((a, x) => a + x.rssBytes, 0),
  cpu: s.reduce((a, x) => a + x.cpuSeconds, 0),
  requests: Object.assign({}, ...s.map((x) => x.requests)) as Record<string, number[]>,
  watches: Object.assign({}, ...s.map((x) => x.watches)) as Record<string, Record<string, number[]>>,
});

export const requestsIn = (r: Record<string, number[]>, from: number, to: number) =>
  Object.values(r).reduce((a, ts) => a + ts.filter((t) => t >= from && t < to).length, 0);

/**
 * Until the agents' start-up is over: in the last `windowMs` no agent made more than one request
 * (its node Lease renewal, every half of fleet.agentLeaseDuration; a thousand agents that started apart are never all silent).
 */
export async function quietAgents(pack: Pack, windowMs: number, timeoutMs: number): Promise<void> {
  // the agents still busy at the last look, for the message if they never settle
  let busy: [string, number][] = [];
  await until(
    'the agents idle',
    async () => {
      const r = sumStats(await pack.stats()).requests;
      const since = Date.now() - windowMs;
      busy = Object.entries(r)
        .map(([node, ts]): [string, number] => [node, ts.filter((t) => t >= since).length])
        .filter(([, n]) => n > 1)
        .sort((a, b) => b[1] - a[1]);
      return busy.length === 0;
    },
    timeoutMs,
    1000,
  ).catch((err: unknown) => {
    const top = busy.slice(0, 3).map(([node, n]) => `${node} ${n}`);
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}: ${busy.length} agents made more than one request in the last ${windowMs / 1000} s (most: ${top.join(', ')})`,
    );
  });
}
