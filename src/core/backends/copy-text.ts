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

type Memory = { memoryLeftBytes?: number; bytesPerSecond?: number };

/** "ETA ~4m" (from the copy rate this evacuation measured), or "" without a rate or with nothing left. */
export function etaText(p: Memory): string {
  if (!p.memoryLeftBytes || !p.bytesPerSecond) return '';
  const s = Math.ceil(p.memoryLeftBytes / p.bytesPerSecond);
  return `ETA ~${s < 60 ? `${s}s` : s < 3600 ? `${Math.round(s / 60)}m` : `${(s / 3600).toFixed(1)}h`}`;
}

/** "12 GiB left, ETA ~4m", or "" without a figure. */
export function memoryText(p: Memory): string {
  if (p.memoryLeftBytes === undefined) return '';
  const left = `${gib(p.memoryLeftBytes)} GiB left`;
  const eta = etaText(p);
  return eta ? `${left}, ${eta}` : left;
}
