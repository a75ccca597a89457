// A host with a real systemd-logind for the shutdown suite: systemd as PID 1 of its own PID, mount, UTS and
// IPC namespaces (boot-host.sh), on an overlay of Debian's bookworm tree debootstrapped once into
// /var/cache/drainer-logind (outside the repository). Its system bus is reached from outside through
// /proc/<pid>/root. Needs root and debootstrap; hostReady() says why not, in one line.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openBus } from '../../src/logind/bus.ts';
import { inhibitDelayMaxMs } from '../../src/logind/watch.ts';

export const CACHE = process.env.DRAINER_LOGIND_CACHE ?? '/var/cache/drainer-logind';
const ROOTFS = join(CACHE, 'rootfs');
const SCRIPT = join(import.meta.dirname, 'boot-host.sh');

/** Why this machine cannot run the suite, or undefined when it can. */
export function hostUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'the real-logind suite needs root (namespaces, mounts, chroot)';
  if (existsSync(join(ROOTFS, 'lib/systemd/systemd-logind'))) return undefined;
  if (spawnSync('sh', ['-c', 'command -v debootstrap']).status !== 0)
    return 'the real-logind suite needs debootstrap (apt-get install debootstrap)';
  return undefined;
}

/** Debootstraps the tree once (minutes); later runs reuse it. */
export function ensureRootfs(): void {
  if (existsSync(join(ROOTFS, 'lib/systemd/systemd-logind'))) return;
  rmSync(ROOTFS, { recursive: true, force: true });
  const r = spawnSync(
    'debootstrap',
    ['--variant=minbase', '--include=systemd,systemd-sysv,dbus,libpam-systemd', 'bookworm', ROOTFS],
    { stdio: 'inherit' },
  );
  if (r.status !== 0) throw new Error(`debootstrap failed (${r.status ?? r.signal})`);
}

export interface Host {
  /** systemd's pid, as this side sees it. */
  readonly pid: number;
  readonly socketPath: string;
  /** systemd-inhibit run in the host's PID namespace, where logind can map its pid. */
  readonly inhibitCommand: readonly string[];
  /** Resolves when systemd has ended (the "reboot" went through). */
  readonly ended: Promise<void>;
  /** Runs a command inside the host (its namespaces and root). */
  run(...argv: string[]): { status: number | null; stdout: string; stderr: string };
  /** Starts `systemctl reboot` inside, without waiting for it. */
  reboot(): ChildProcess;
  /** Ends the host and removes its overlay. */
  stop(): Promise<void>;
}

/** Boots a host whose logind caps delay locks at delaySec, and waits until logind answers on its bus. */
export async function bootHost(delaySec: number): Promise<Host> {
  const work = mkdtempSync(join(tmpdir(), 'drainer-host-'));
  const unshare = spawn(
    'unshare',
    ['--fork', '--pid', '--mount', '--uts', '--ipc', SCRIPT, ROOTFS, work, String(delaySec)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let console = '';
  unshare.stdout.on('data', (d: Buffer) => (console += d.toString()));
  unshare.stderr.on('data', (d: Buffer) => (console += d.toString()));
  const ended = new Promise<void>((r) => unshare.once('exit', () => r()));
  const pid = await childPid(unshare.pid ?? 0);
  const socketPath = `/proc/${pid}/root/run/dbus/system_bus_socket`;
  const host: Host = {
    pid,
    socketPath,
    inhibitCommand: ['/usr/bin/nsenter', '-t', String(pid), '-p', '--', '/usr/bin/systemd-inhibit'],
    ended,
    run: (...argv) => {
      const r = spawnSync('nsenter', ['-t', String(pid), '-m', '-p', '-u', '-i', '-r', '-w', ...argv], {
        encoding: 'utf8',
      });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    reboot: () =>
      spawn('nsenter', ['-t', String(pid), '-m', '-p', '-u', '-i', '-r', '-w', 'systemctl', 'reboot'], {
        stdio: 'ignore',
      }),
    stop: async () => {
      if (unshare.exitCode === null) {
        spawnSync('kill', ['-KILL', String(pid)]);
        await ended;
      }
      rmSync(work, { recursive: true, force: true });
    },
  };
  for (let i = 0; i < 300; i++) {
    if (unshare.exitCode !== null)
      throw new Error(`the host's systemd ended while booting:\n${console.slice(-2000)}`);
    const bus = await openBus(socketPath).catch(() => undefined);
    const ok = bus
      ? await inhibitDelayMaxMs(bus).then(
          () => true,
          () => false,
        )
      : false;
    bus?.close();
    if (ok) return host;
    await sleep(100);
  }
  await host.stop();
  throw new Error(`logind did not come up on ${socketPath} in 30 s:\n${console.slice(-2000)}`);
}

/** The forked child of unshare: PID 1 inside, systemd once boot-host.sh has exec'd it. */
async function childPid(parent: number): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const path = `/proc/${parent}/task/${parent}/children`;
    const child = existsSync(path) ? readFileSync(path, 'utf8').trim().split(' ')[0] : '';
    if (child) return Number(child);
    await sleep(50);
  }
  throw new Error('unshare started no child');
}
