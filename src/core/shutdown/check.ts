// Is logind's time enough (issue 49 item 3)? logind waits for a delay lock up to InhibitDelayMaxUSec, the
// one cap of every delay lock, which the kubelet sets from its shutdownGracePeriod (its drop-in
// 99-kubelet.conf). Compared with an estimate of this node's evacuation: the memory of its VMs to move at
// the configured rate (shutdown.migrationRate: the host's link, shared by its migrations), plus a fixed
// cost per move (Nova's pre-checks and post-migration take seconds whatever the size), plus drainer's
// release margin. One line, and what to raise. Pure.
import { durationText } from '../capi/timeouts.ts';

/** Seconds a live migration costs beyond its copy (scheduling, pre-checks, post-migration). */
export const MOVE_OVERHEAD_S = 5;

export interface ShutdownCheckInput {
  /** logind's cap in ms, or why it could not be read. */
  readonly delayMaxMs: number | string;
  /** The VMs that would have to move (their memory where the plugin knows it). */
  readonly vms: readonly { readonly memoryBytes?: number }[];
  readonly rateMiBps: number;
  /** Moves at once (nova.maxConcurrentMigrations): the fixed cost is paid per round. */
  readonly atOnce: number;
  readonly marginSeconds: number;
}

const RAISE = "the kubelet's shutdownGracePeriod (it sets logind's InhibitDelayMaxSec)";

export interface ShutdownVerdict {
  readonly short: boolean;
  /** The one line: what logind gives, what the evacuation needs, and (short) what to raise. */
  readonly line: string;
  /** When short: what to raise (also at the line's end). */
  readonly fix?: string;
}

export function shutdownCheck(i: ShutdownCheckInput): ShutdownVerdict {
  if (!i.vms.length)
    return { short: false, line: 'shutdown: no VMs to move: an unplanned reboot is not delayed' };
  const known = i.vms.filter((v) => v.memoryBytes !== undefined);
  const mib = known.reduce((n, v) => n + (v.memoryBytes ?? 0), 0) / 1024 ** 2;
  const rounds = Math.ceil(i.vms.length / Math.max(1, i.atOnce));
  const need = Math.ceil(mib / i.rateMiBps + rounds * MOVE_OVERHEAD_S + i.marginSeconds);
  const unknown = i.vms.length - known.length;
  const why = [
    `${i.vms.length} VM${i.vms.length === 1 ? '' : 's'}, ${Math.round(mib / 1024)} GiB at ${i.rateMiBps} MiB/s`,
    ...(unknown ? [`${unknown} of unknown memory not counted`] : []),
    `${MOVE_OVERHEAD_S}s a move`,
    `${i.marginSeconds}s margin`,
  ].join(', ');
  const needs = `this node's evacuation needs about ${durationText(need)} (${why})`;
  if (typeof i.delayMaxMs === 'string')
    return {
      short: false,
      line: `shutdown: logind's InhibitDelayMaxUSec unknown (${i.delayMaxMs}), ${needs}: compare with ${RAISE}`,
    };
  const gives = `shutdown: logind gives ${durationText(i.delayMaxMs / 1000)} (InhibitDelayMaxUSec), ${needs}`;
  if (i.delayMaxMs / 1000 >= need)
    return { short: false, line: `${gives}: an unplanned reboot now is evacuated in time` };
  const fix = `raise ${RAISE} to ${durationText(need)} or more`;
  return {
    short: true,
    line: `${gives}: an unplanned reboot now leaves VMs to their fallback (Nova: stopped); ${fix}`,
    fix,
  };
}
