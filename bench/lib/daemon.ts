// The daemon as the DaemonSet runs it: a child process `node <entry> daemon` (src/cli.ts, or the
// bundle's cli.js) with NODE_NAME, a config file and a kubeconfig (or, in pod mode, the ServiceAccount
// environment), its health server on a free loopback port. Measures start → /readyz 200, and reads RSS
// and CPU from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import yaml from 'js-yaml';

export interface DaemonOptions {
  readonly repo: string;
  readonly dir: string;
  readonly nodeName: string;
  /** Absent in pod mode: then `env` carries KUBERNETES_SERVICE_HOST/PORT. */
  readonly kubeconfig?: string;
  /** The CLI entry, relative to repo or absolute (default src/cli.ts). */
  readonly entry?: string;
  /** Node options before the entry (V8 flags NODE_OPTIONS does not take), as the image's ENTRYPOINT gives them. */
  readonly execArgv?: readonly string[];
  /** More environment for the child. */
  readonly env?: Readonly<Record<string, string>>;
  /** drainer config (input form); kubeconfig and the health server are filled in here. */
  readonly config: Record<string, unknown>;
  readonly readyTimeoutMs?: number;
}

export interface ProcSample {
  readonly rssBytes: number;
  /** user + system CPU seconds since the process started. */
  readonly cpuSeconds: number;
}

export interface RunningDaemon {
  readonly pid: number;
  readonly port: number;
  /** Spawn → first /readyz 200, in ms. */
  readonly startToReadyMs: number;
  readonly logPath: string;
  sample(): Promise<ProcSample>;
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

export async function sampleProc(pid: number): Promise<ProcSample> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(rest[11]) + Number(rest[12]);
  return { rssBytes: rssKb * 1024, cpuSeconds: ticks / CLOCK_TICKS };
}

/** A value of a Prometheus text exposition (first sample of the metric), or NaN. */
export function metricValue(text: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)`, 'm').exec(text);
  return m?.[1] ? Number(m[1]) : Number.NaN;
}

async function waitReady(child: ChildProcess, port: number, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`daemon exited with ${child.exitCode} before it was ready`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      await res.text();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) throw new Error('daemon not ready in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

export async function startDaemon(o: DaemonOptions): Promise<RunningDaemon> {
  const port = await freePort();
  const configPath = path.join(o.dir, 'config.yaml');
  const config = {
    ...o.config,
    ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
    server: { enabled: true, bindAddress: '127.0.0.1', port },
  };
  await writeFile(configPath, yaml.dump(config), { mode: 0o600 });
  const logPath = path.join(o.dir, 'daemon.log');
  const out = createWriteStream(logPath);
  const started = performance.now();
  const entry = o.entry ?? 'src/cli.ts';
  const child = spawn(
    process.execPath,
    [...(o.execArgv ?? []), entry, 'daemon', '--config-path', configPath],
    {
      cwd: o.repo,
      env: { PATH: process.env.PATH ?? '', HOME: o.dir, NODE_NAME: o.nodeName, ...o.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitReady(child, port, o.readyTimeoutMs ?? 30_000);
  } catch (e) {
    child.kill('SIGKILL');
    await exited;
    throw e;
  }
  const startToReadyMs = performance.now() - started;
  const pid = child.pid ?? -1;
  return {
    pid,
    port,
    startToReadyMs,
    logPath,
    sample: () => sampleProc(pid),
    metrics: async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      out.end();
    },
  };
}
