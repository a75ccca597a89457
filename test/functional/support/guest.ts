// Real guests (the stack's libvirt driver): which cloud has them, what a guest says about itself on its
// serial console (read through Nova's os-getConsoleOutput), and what libvirt reports about a finished
// migration (`virsh domjobinfo --completed` on the destination's libvirtd).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cloudFromEnv } from './cloud-env.ts';
import { expectStatus, Session, type Body } from './session.ts';
import { waitFor } from './wait.ts';

const run = promisify(execFile);

export interface Hypervisor {
  host: string;
  type: string;
}

export async function hypervisors(admin: Session): Promise<Hypervisor[]> {
  const res = expectStatus(
    await admin.request('compute', 'GET', '/os-hypervisors/detail', { microversion: '2.53' }),
    'list hypervisors',
    200,
  );
  return (res.body.hypervisors as Body[]).map((h) => ({
    host: h.service?.host ?? h.hypervisor_hostname,
    type: h.hypervisor_type,
  }));
}

/** The cloud's hypervisor types, and whether they run real guests (QEMU: the stack's libvirt driver). */
export async function cloudGuests(): Promise<{ types: string[]; real: boolean }> {
  try {
    const types = [...new Set((await hypervisors(await Session.open(cloudFromEnv()))).map((h) => h.type))];
    return { types, real: types.includes('QEMU') };
  } catch {
    return { types: [], real: false }; // no cloud: the files that need one say so
  }
}

/**
 * Each compute host's libvirtd, for libvirt's own figures (DRAINER_FT_LIBVIRT, "host=uri,…"; the
 * project's stack by default). Nova does not say where its libvirtd listens.
 */
export function libvirtUri(host: string, env = process.env): string {
  const spec =
    env.DRAINER_FT_LIBVIRT ?? 'compute-a=qemu+tcp://127.0.0.2/system,compute-b=qemu+tcp://127.0.0.3/system';
  const uri = spec
    .split(',')
    .map((kv) => kv.split('='))
    .find(([h]) => h === host)?.[1];
  if (!uri) throw new Error(`DRAINER_FT_LIBVIRT names no libvirtd for ${host}`);
  return uri;
}

/** What the guest printed: `drainer-guest boot=<id> tick=<n> check=ok|BAD …` lines (guest/init). */
export interface GuestReport {
  boots: string[];
  lastTick: number;
  /**
   * The tick numbers whose self-check failed. By number, not count: Nova's console log of a guest
   * starts again after a live migration, so counts from two reads are not comparable.
   */
  badTicks: number[];
  /** A kernel oops or panic anywhere in the log. */
  crashed: boolean;
  poweredOff: boolean;
  lines: number;
}

const TICK = /drainer-guest boot=([0-9a-f]+) tick=(\d+) check=(ok|BAD)/;

export function readReport(log: string): GuestReport {
  const boots: string[] = [];
  let lastTick = 0;
  const badTicks: number[] = [];
  let lines = 0;
  for (const line of log.split('\n')) {
    const m = TICK.exec(line);
    if (!m) continue;
    lines++;
    if (boots.at(-1) !== m[1]) boots.push(m[1]!);
    lastTick = Number(m[2]);
    if (m[3] === 'BAD') badTicks.push(lastTick);
  }
  return {
    boots,
    lastTick,
    badTicks,
    crashed: /Oops|Kernel panic|general protection fault|BUG:/.test(log),
    poweredOff: log.includes('acpi power-off'),
    lines,
  };
}

export async function consoleLog(s: Session, id: string): Promise<string> {
  const res = await s.request('compute', 'POST', `/servers/${id}/action`, {
    json: { 'os-getConsoleOutput': { length: -1 } },
  });
  return expectStatus(res, `console of ${id}`, 200).body.output as string;
}

/** The guest's report once it has printed `after` more ticks than `since` (it is alive and checking). */
export async function freshReport(s: Session, id: string, since = 0, after = 1): Promise<GuestReport> {
  return waitFor(
    async () => {
      const r = readReport(await consoleLog(s, id));
      return r.lastTick >= since + after || r.crashed ? r : undefined;
    },
    {
      what: `guest ${id} to print ${after} self-check(s) after tick ${since}`,
      timeoutMs: 90_000,
      intervalMs: 1000,
    },
  );
}

/** libvirt's statistics of the last migration a host received: `virsh domjobinfo --completed`. */
export interface JobStats {
  /** Total time of the migration (ms) and the guest's downtime (ms), as libvirt reports them. */
  elapsedMs?: number;
  downtimeMs?: number;
  /** Dirty-sync rounds (QEMU's memory iterations). */
  rounds?: number;
  memoryMiB?: number;
}

export async function completedJob(host: string, instanceName: string): Promise<JobStats> {
  const { stdout } = await run(
    'virsh',
    ['-c', libvirtUri(host), 'domjobinfo', instanceName, '--completed', '--keep-completed'],
    { timeout: 20_000 },
  );
  const field = (label: string): number | undefined => {
    const m = new RegExp(`^${label}:\\s+([\\d.]+)`, 'm').exec(stdout);
    return m ? Number(m[1]) : undefined;
  };
  const processed = field('Memory processed');
  return {
    elapsedMs: field('Time elapsed'),
    downtimeMs: field('Total downtime'),
    rounds: field('Iteration'),
    ...(processed !== undefined ? { memoryMiB: processed } : {}),
  };
}

/** Kills a guest under Nova's feet, as a crash would (its QEMU destroyed by its libvirtd). */
export async function destroyGuest(host: string, instanceName: string): Promise<void> {
  await run('virsh', ['-c', libvirtUri(host), 'destroy', instanceName], { timeout: 20_000 });
}
