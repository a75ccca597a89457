// The fleet-real bench's API-server restart (issue 51 item 2): stop and start the API server under
// a fleet of agents, then judge how they come back. What matters is that no agent storms, not that
// the peak is flat: kubelet-class agents re-open their watches at once too. So: every watch back
// within 60 s; in no second more than 1 request per agent; no agent opening one watch more than
// twice in the 60 s after the API server answers again (the agents' own count of each watch opened).
import {
  requestsOf,
  total,
  watchesOf,
  window,
  type Credentials,
  type Window,
} from '../lib/apiserver-metrics.ts';
import { sumStats, type Pack } from '../lib/fleet-pack.ts';
import { atMost, info, type Figure } from '../lib/report.ts';
import { round } from '../lib/stats.ts';
import { sleep, until } from '../lib/wait.ts';

/** The span after the API server answers again in which each agent's watch opens are counted. */
const REOPEN_WINDOW_MS = 60_000;

export interface RestartFigures {
  readonly downS: number;
  /** From the API server answering again until its WATCH gauge is back at the level before. */
  readonly rewatchS: number | undefined;
  readonly watchesBefore: number;
  readonly watchesAfter: number;
  /** Requests started per second (answered requests plus newly held watches), the largest 1 s bucket. */
  readonly peakPerSecond: number;
  /** The same over the number of agents (absent: a run before it was measured). */
  readonly peakPerAgentPerSecond?: number;
  /** The most times one agent opened the same watch in the 60 s after the API server answered again. */
  readonly mostOpensOfOneWatch?: number;
  readonly idlePerSecond: number;
}

async function sh(cmd: string, timeoutMs: number): Promise<void> {
  const { execFile } = await import('node:child_process');
  await new Promise<void>((resolve, reject) =>
    execFile('bash', ['-c', cmd], { timeout: timeoutMs }, (err, _o, stderr) =>
      err ? reject(new Error(`${cmd}: ${stderr.trim().split('\n').slice(-3).join(' / ')}`)) : resolve(),
    ),
  );
}

export async function restartApiServer(
  cmds: { stop: string; start: string },
  c: Credentials,
  fleet: { agents: number; idlePerSecond: number; baselinePerSecond: number; pack: Pack },
): Promise<RestartFigures> {
  const { baselinePerSecond } = fleet;
  const before = watchesOf((await window(c)).samples);
  const down = Date.now();
  await sh(cmds.stop, 180_000);
  // a stop command may return while the API server still drains its requests: start only once it is gone
  await until(
    'the API server stopped',
    async () =>
      !(await window(c).then(
        () => true,
        () => false,
      )),
    120_000,
    500,
  );
  await sh(cmds.start, 300_000);
  let prev: Window | undefined;
  let back: number | undefined;
  let rewatch: number | undefined;
  let after = 0;
  let peak = 0;
  const end = Date.now() + 120_000;
  // a fresh process: its counters start at 0; one scrape a second
  while (Date.now() < end) {
    const w = await window(c).catch(() => undefined);
    if (w) {
      back ??= w.at;
      after = watchesOf(w.samples);
      if (prev) {
        const s = (w.at - prev.at) / 1000;
        const started =
          requestsOf(w.samples) - requestsOf(prev.samples) + Math.max(0, after - watchesOf(prev.samples));
        peak = Math.max(peak, started / s);
      } else {
        // a fresh process's counters hold all it answered since it started, not one second's
        const startedAt = total(w.samples, 'process_start_time_seconds');
        const up = startedAt > 0 ? Math.max(1, w.at / 1000 - startedAt) : 1;
        peak = Math.max(peak, (requestsOf(w.samples) + after) / up);
      }
      if (rewatch === undefined && after >= before) rewatch = (w.at - back) / 1000;
      prev = w;
      // on until every watch is back and the re-open count's 60 s are over
      if (rewatch !== undefined && Date.now() - back > Math.max(rewatch * 1000 + 20_000, REOPEN_WINDOW_MS))
        break;
    }
    await sleep(1000);
  }
  const opened = sumStats(await fleet.pack.stats()).watches;
  const from = back ?? Date.now();
  // per agent and watched path: how often that one watch was opened in the window
  const reopens = Object.values(opened).flatMap((byPath) =>
    Object.values(byPath).map((ts) => ts.filter((t) => t >= from && t < from + REOPEN_WINDOW_MS).length),
  );
  return {
    downS: ((back ?? Date.now()) - down) / 1000,
    rewatchS: rewatch,
    watchesBefore: before,
    watchesAfter: after,
    peakPerSecond: Math.max(0, peak - baselinePerSecond),
    peakPerAgentPerSecond: Math.max(0, peak - baselinePerSecond) / fleet.agents,
    mostOpensOfOneWatch: Math.max(0, ...reopens),
    idlePerSecond: fleet.idlePerSecond,
  };
}

/** The restart's rows in BENCHMARKS.md, judged by issue 51's goal. */
export function restartRows(label: string, agents: number, r: RestartFigures): Figure[] {
  const opens = `${label}: API-server restart, most opens of one agent's watch in the 60 s after`;
  return [
    atMost(
      `${label}: API-server restart, until every watch is back`,
      round(r.rewatchS ?? Infinity, 1),
      60,
      's',
    ),
    // the old goal, a peak within 5 times idle, cannot hold beside every watch back in 60 s at 4 or
    // more watches per agent; a run before the per-agent figure is judged from its peak
    atMost(
      `${label}: API-server restart, peak requests per second per agent`,
      round(r.peakPerAgentPerSecond ?? r.peakPerSecond / agents, 2),
      1,
    ),
    r.mostOpensOfOneWatch === undefined
      ? info(opens, 'not measured')
      : atMost(opens, r.mostOpensOfOneWatch, 2),
  ];
}
