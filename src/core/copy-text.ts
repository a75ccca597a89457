// One line for a live migration's copy, as status, the demo and logs show it.
import type { CopyProgress } from './plugin.ts';

const GIB = 1024 ** 3;

const gib = (bytes: number): string => {
  const v = bytes / GIB;
  return Number.isInteger(v) || v >= 10 ? String(Math.round(v)) : v.toFixed(1);
};

/** "62 % (3.1 of 8 GiB left, not converging)". */
export function copyText(c: Pick<CopyProgress, 'totalBytes' | 'remainingBytes' | 'converging'>): string {
  const pct = c.totalBytes > 0 ? Math.floor((100 * (c.totalBytes - c.remainingBytes)) / c.totalBytes) : 0;
  const left = `${gib(c.remainingBytes)} of ${gib(c.totalBytes)} GiB left`;
  return `${pct} % (${c.converging ? left : `${left}, not converging`})`;
}
