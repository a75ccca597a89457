// kubectl as an operator runs it, against the real cluster's kubeconfig. Never throws on a non-zero exit:
// the cases assert on what kubectl and the API server answered.
import { execFile, spawn } from 'node:child_process';
import type { RealEnv } from './env.ts';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** API objects are what the cases assert on, so they stay loosely typed. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = any;

export interface Kubectl {
  run(args: readonly string[], opts?: { input?: string; timeoutMs?: number }): Promise<Run>;
  /** Runs and throws with kubectl's stderr unless it exits 0. */
  ok(args: readonly string[], opts?: { input?: string; timeoutMs?: number }): Promise<string>;
  /** `kubectl get … -o json`, or undefined when the object does not exist. */
  get(args: readonly string[]): Promise<Obj>;
  /** A raw API GET (`kubectl get --raw`). */
  raw(path: string): Promise<Obj>;
  /** Starts a long-running kubectl (drain) and reports when it exits. */
  start(args: readonly string[]): Background;
}

export interface Background {
  readonly startedAt: number;
  /** Resolves when kubectl exits, with the time it did. */
  readonly done: Promise<Run & { endedAt: number }>;
  exited(): boolean;
  kill(): void;
}

export function kubectl(env: RealEnv): Kubectl {
  const base = ['--kubeconfig', env.kubeconfig];
  const run: Kubectl['run'] = (args, opts = {}) =>
    new Promise((resolve) => {
      const child = execFile(
        env.kubectl,
        [...base, ...args],
        { encoding: 'utf8', timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 << 20 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
      if (opts.input !== undefined) child.stdin?.end(opts.input);
    });
  const ok: Kubectl['ok'] = async (args, opts) => {
    const r = await run(args, opts);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: exit ${r.code}: ${r.stderr.trim()}`);
    return r.stdout;
  };
  return {
    run,
    ok,
    async get(args) {
      const r = await run(['get', ...args, '-o', 'json']);
      if (r.code !== 0 && /NotFound|not found/.test(r.stderr)) return undefined;
      if (r.code !== 0) throw new Error(`kubectl get ${args.join(' ')}: ${r.stderr.trim()}`);
      return JSON.parse(r.stdout);
    },
    async raw(path) {
      return JSON.parse(await ok(['get', '--raw', path]));
    },
    start(args) {
      const startedAt = Date.now();
      const child = spawn(env.kubectl, [...base, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      let exited = false;
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const done = new Promise<Run & { endedAt: number }>((resolve) =>
        child.on('exit', (code) => {
          exited = true;
          resolve({ code: code ?? 1, stdout, stderr, endedAt: Date.now() });
        }),
      );
      return { startedAt, done, exited: () => exited, kill: () => child.kill('SIGTERM') };
    },
  };
}
