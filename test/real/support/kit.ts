// The API server's restart, the kit's way (../shared/realk8s README): stop exactly the pid in its pid file,
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

/** DRAINER_REAL_APISERVER_STOP/START (shell commands), else the realk8s kit beside the repository. */
export function apiServerControl(env: Env = process.env): ApiServerControl {
  if (env.DRAINER_REAL_APISERVER_STOP && env.DRAINER_REAL_APISERVER_START) {
    return {
      stop: () => sh(env.DRAINER_REAL_APISERVER_STOP!, 60_000),
      start: () => sh(env.DRAINER_REAL_APISERVER_START!, 300_000),
    };
  }
  const up = [
    path.resolve(REPO, '../shared/realk8s/up.sh'),
    path.resolve(REPO, '../../shared/realk8s/up.sh'),
  ].find((p) => existsSync(p));
  const pidFile = path.join(env.KIT_DIR ?? '/tmp/realk8s-kit', 'run/kube-apiserver.pid');
  if (!up || !existsSync(pidFile))
    throw new Error(
      'set DRAINER_REAL_APISERVER_STOP and DRAINER_REAL_APISERVER_START (no realk8s kit found)',
    );
  return {
    async stop() {
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
        // its graceful termination waits up to 60 s for the requests in flight (watches) before it exits
        { what: `kube-apiserver (pid ${pid}) to exit`, timeoutMs: 120_000, intervalMs: 200 },
      );
    },
    start: () => sh(`"${up}" >/dev/null`, 300_000),
  };
}
