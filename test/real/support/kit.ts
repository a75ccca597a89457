// The API server's and the kubelet's restarts, the kit's way (../shared/realk8s README): stop exactly the pid in its pid file,
// then its idempotent up.sh starts what is not running. Another cluster names its own commands.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '../../functional/support/wait.ts';
import { REPO } from './context.ts';

type Env = Readonly<Record<string, string | undefined>>;

export interface ApiServerControl {
  stop(): Promise<void>;
  start(): Promise<void>;
}

const sh = (cmd: string, timeoutMs: number) =>
  new Promise<void>((resolve, reject) =>
    execFile('bash', ['-c', cmd], { timeout: timeoutMs }, (err, _out, stderr) =>
      err ? reject(new Error(`${cmd}: ${stderr.trim().split('\n').slice(-3).join(' / ')}`)) : resolve(),
    ),
  );

/** The kit's up.sh beside the repository (or beside its export in /tmp), if there is one. */
const kitUp = (): string | undefined =>
  [path.resolve(REPO, '../shared/realk8s/up.sh'), path.resolve(REPO, '../../shared/realk8s/up.sh')].find(
    (p) => existsSync(p),
  );

const kitPidFile = (env: Env, daemon: string) =>
  path.join(env.KIT_DIR ?? '/tmp/realk8s-kit', `run/${daemon}.pid`);

/** SIGTERM to exactly the pid in the kit's pid file, then waits until that process is gone. */
async function stopKitDaemon(pidFile: string, what: string, timeoutMs: number): Promise<void> {
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  process.kill(pid, 'SIGTERM');
  await waitFor(
    async () => {
      try {
        process.kill(pid, 0);
        return undefined;
      } catch {
        return true;
      }
    },
    { what: `${what} (pid ${pid}) to exit`, timeoutMs, intervalMs: 200 },
  );
}

/** DRAINER_REAL_APISERVER_STOP/START (shell commands), else the realk8s kit beside the repository. */
export function apiServerControl(env: Env = process.env): ApiServerControl {
  if (env.DRAINER_REAL_APISERVER_STOP && env.DRAINER_REAL_APISERVER_START) {
    return {
      stop: () => sh(env.DRAINER_REAL_APISERVER_STOP!, 60_000),
      start: () => sh(env.DRAINER_REAL_APISERVER_START!, 300_000),
    };
  }
  const up = kitUp();
  const pidFile = kitPidFile(env, 'kube-apiserver');
  if (!up || !existsSync(pidFile))
    throw new Error(
      'set DRAINER_REAL_APISERVER_STOP and DRAINER_REAL_APISERVER_START (no realk8s kit found)',
    );
  return {
    // its graceful termination waits up to 60 s for the requests in flight (watches) before it exits
    stop: () => stopKitDaemon(pidFile, 'kube-apiserver', 120_000),
    start: () => sh(`"${up}" >/dev/null`, 300_000),
  };
}

/**
 * Restarts the node's kubelet: DRAINER_REAL_KUBELET_RESTART (a shell command), else the kit's (its pid, then
 * up.sh, which waits for the node Ready). A kubelet v1.26 registers its Node only when it starts: after
 * `kubectl delete node` it logs "error getting node" until it is restarted (seen on the kit).
 */
export function kubeletRestart(env: Env = process.env): () => Promise<void> {
  if (env.DRAINER_REAL_KUBELET_RESTART) return () => sh(env.DRAINER_REAL_KUBELET_RESTART!, 300_000);
  const up = kitUp();
  const pidFile = kitPidFile(env, 'kubelet');
  if (!up || !existsSync(pidFile)) throw new Error('set DRAINER_REAL_KUBELET_RESTART (no realk8s kit found)');
  return async () => {
    await stopKitDaemon(pidFile, 'kubelet', 60_000);
    await sh(`"${up}" >/dev/null`, 300_000);
  };
}
