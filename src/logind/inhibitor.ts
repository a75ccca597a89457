// logind's delay lock, held by a child: `systemd-inhibit --mode=delay` takes the lock (its fd) and runs a tiny
// node holder that says "held" and lives until its stdin ends. Releasing ends stdin; the agent dying ends it too,
// so a lock never outlives the agent that took it. (wire.ts says why a child holds it.)
import { spawn } from 'node:child_process';
import { DrainerError } from '../errors.ts';

export interface DelayLock {
  /** Gives the lock back; resolves once its holder is gone (logind then no longer waits for it). */
  release(): Promise<void>;
  /** Resolves if the holder ends by itself (the lock is gone). */
  readonly lost: Promise<void>;
}

export type TakeDelayLock = (why: string) => Promise<DelayLock>;

const HOLDER =
  'process.stdout.write("held\\n");process.stdin.on("data",()=>{});process.stdin.on("end",()=>process.exit(0));';

export interface InhibitorOptions {
  /** The system bus socket the lock is taken on. */
  socketPath: string;
  /**
   * systemd-inhibit, as an absolute path (the child gets no PATH), with any prefix that runs it. logind
   * refuses a caller whose pid the bus cannot map into its own PID namespace ("Protocol error"): a pod's
   * pid namespace is below the host's, so the agent's is mapped; a test host in a child namespace needs
   * `nsenter -t <pid> -p --` before it.
   */
  command: readonly string[];
}

/** The real lock: systemd-inhibit on the given bus. A refusal (no logind, no right) is a DrainerError with logind's words. */
export function systemdInhibit(opts: InhibitorOptions): TakeDelayLock {
  return (why) =>
    new Promise((resolve, reject) => {
      const [binary = '', ...prefix] = opts.command;
      const child = spawn(
        binary,
        [
          ...prefix,
          '--what=shutdown:sleep',
          '--who=drainer',
          `--why=${why}`,
          '--mode=delay',
          '--',
          process.execPath,
          '-e',
          HOLDER,
        ],
        {
          env: { DBUS_SYSTEM_BUS_ADDRESS: `unix:path=${opts.socketPath}` },
          stdio: 'pipe',
        },
      );
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      child.once('error', (e) =>
        reject(new DrainerError('UNSUPPORTED', `${binary}: ${e.message}`, { cause: e })),
      );
      void exited.then(() =>
        reject(
          new DrainerError(
            'FORBIDDEN',
            `logind refused the delay lock: ${stderr.trim().split('\n')[0] ?? 'no reason'}`,
          ),
        ),
      );
      child.stdout.on('data', (d: Buffer) => {
        if (!d.toString().includes('held')) return;
        resolve({
          lost: exited,
          release: async () => {
            child.stdin.end();
            const killer = setTimeout(() => child.kill('SIGKILL'), 2000);
            await exited;
            clearTimeout(killer);
          },
        });
      });
    });
}
