// The daemon as the DaemonSet runs it (runDaemon: NODE_NAME, a kubeconfig file, the health server on
// loopback) against a stack's sandbox, for the stories that scrape /healthz, /readyz or /metrics.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runDaemon } from '../../src/cli/daemon.ts';
import { configSchema } from '../../src/config/schema.ts';
import { until, type Stack } from './stack.ts';

export interface RunningDaemon {
  get(p: string): Promise<{ status: number; text: string }>;
  /** SIGTERM, and wait until it has stopped. */
  stop(): Promise<void>;
}

export async function startDaemon(
  s: Stack,
  nodeName: string,
  env: NodeJS.ProcessEnv = {},
): Promise<RunningDaemon> {
  const kubeconfig = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-daemon-')), 'kubeconfig');
  writeFileSync(kubeconfig, s.sandbox.kube.kubeconfig());
  const config = configSchema.parse({
    ...s.config,
    nodeName,
    kubeconfig,
    server: { enabled: true, bindAddress: '127.0.0.1', port: 0 },
  });
  const stop = new AbortController();
  let port = 0;
  const running = runDaemon({ config, log: s.log, signal: stop.signal, env, onListening: (p) => (port = p) });
  await until('listening', () => port > 0);
  return {
    get: async (p) => {
      const res = await fetch(`http://127.0.0.1:${port}${p}`);
      return { status: res.status, text: await res.text() };
    },
    stop: async () => {
      stop.abort();
      await running;
    },
  };
}

/** A kubeconfig and a config file for a daemon process on the stack's sandbox (warn-level logs). */
export function daemonFiles(
  s: Stack,
  nodeName: string,
  extra: Record<string, unknown> = {},
): { kubeconfig: string; configPath: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-daemon-process-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, s.sandbox.kube.kubeconfig());
  const configPath = path.join(dir, 'config.yaml');
  writeFileSync(
    configPath,
    JSON.stringify({ ...s.config, logLevel: 'warn', nodeName, kubeconfig, ...extra }),
  );
  return { kubeconfig, configPath };
}

/** `drainer daemon` as its own process, with the downward API's variables in `env`; the caller kills it. */
export const spawnDaemon = (configPath: string, env: Record<string, string>): ChildProcess =>
  spawn(process.execPath, ['bin/drainer.js', 'daemon', '--config-path', configPath], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: 'ignore',
  });
