// libvirt's pre-copy, in rounds: the first copies all of the guest's memory at the link's
// bandwidth; each next one copies what the guest dirtied during the one before (within its hot
// working set). It converges once what is left fits in the switch-over pause; when the guest
// dirties as fast as the link copies, what is left stops falling and only a forced completion
// (pause the guest, copy the rest) or Nova's completion timeout ends it.

/** The share of a guest's memory it keeps rewriting (its hot working set). */
const HOT_SHARE = 0.4;
/** libvirt's default max downtime: what is left when the guest is paused to switch over. */
const SWITCH_OVER_MS = 500;
const MAX_ROUNDS = 30;

export interface CopyModel {
  totalBytes: number;
  /** Link bandwidth and the guest's dirty rate, bytes per ms. */
  bandwidth: number;
  dirtyRate: number;
}

export interface PreCopy {
  /** When it converges (ms after it started running), or undefined if it never does. */
  convergeMs: number | undefined;
  /** memory_processed_bytes and memory_remaining_bytes this long after it started running. */
  at(ms: number): { processed: number; remaining: number };
}

export function preCopy(m: CopyModel): PreCopy {
  const bandwidth = Math.max(m.bandwidth, 1e-9);
  const hot = m.totalBytes * HOT_SHARE;
  // rounds[k] = [start, what is left at its start]; the last entry is where it converges or stalls
  const rounds: [number, number][] = [[0, m.totalBytes]];
  let convergeMs: number | undefined;
  for (let k = 0; k < MAX_ROUNDS; k++) {
    const [start, left] = rounds[k]!;
    const length = left / bandwidth;
    if (left <= bandwidth * SWITCH_OVER_MS) {
      convergeMs = start + length;
      break;
    }
    const next = Math.min(hot, m.dirtyRate * length);
    if (k > 0 && next >= left) break; // stopped falling
    rounds.push([start + length, next]);
  }
  const at = (ms: number) => {
    const t = convergeMs === undefined ? ms : Math.min(ms, convergeMs);
    let remaining = rounds.at(-1)![1];
    for (let k = 0; k < rounds.length - 1; k++) {
      const [start, left] = rounds[k]!;
      const next = rounds[k + 1]!;
      if (t < next[0]) {
        remaining = Math.max(next[1], left - bandwidth * (t - start));
        break;
      }
    }
    if (convergeMs !== undefined && ms >= convergeMs) remaining = 0;
    return { processed: Math.round(bandwidth * Math.max(0, t)), remaining: Math.round(remaining) };
  };
  return { convergeMs, at };
}
