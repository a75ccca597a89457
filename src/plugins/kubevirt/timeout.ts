// The per-VMI migration deadline. KubeVirt gives a migration completionTimeoutPerGiB (150 s by
// default, KubeVirt CR spec.configuration.migrations) per GiB of what it copies before it aborts it
// itself; a flat deadline would call a healthy migration of a big guest failed. drainer's default
// follows the guest: per GiB of its memory (KubeVirt's value unless configured) plus a margin for
// scheduling the target and the handover. A fixed kubevirt.migrationTimeout replaces it.
import type { KubevirtConfig } from '../../config/schema.ts';
import { parseQuantity } from './quantity.ts';
import type { Vmi } from './types.ts';

const GIB = 2 ** 30;
/** KubeVirt's default completionTimeoutPerGiB. */
export const KUBEVIRT_COMPLETION_TIMEOUT_PER_GIB = 150;

export interface Deadline {
  readonly ms: number;
  /** How it was reached, for the failure message. */
  readonly why: string;
}

/** The guest memory in bytes: the size KubeVirt reports, else the spec's guest size or request. */
export function guestMemoryBytes(vmi: Vmi): number | undefined {
  const candidates = [
    vmi.status?.memory?.guestCurrent,
    vmi.spec?.domain?.memory?.guest,
    vmi.spec?.domain?.resources?.requests?.memory,
  ];
  for (const q of candidates) {
    if (q === undefined) continue;
    const bytes = parseQuantity(q);
    if (Number.isFinite(bytes) && bytes > 0) return bytes;
  }
  return undefined;
}

/** The deadline of one VMI's running migration. */
export function migrationDeadline(
  vmi: Vmi,
  config: Pick<KubevirtConfig, 'migrationTimeout' | 'migrationTimeoutPerGiB' | 'migrationTimeoutMargin'>,
  clusterPerGiB: number | undefined,
): Deadline {
  if (config.migrationTimeout !== undefined)
    return { ms: config.migrationTimeout * 1000, why: 'kubevirt.migrationTimeout' };
  const perGiB = config.migrationTimeoutPerGiB ?? clusterPerGiB ?? KUBEVIRT_COMPLETION_TIMEOUT_PER_GIB;
  const bytes = guestMemoryBytes(vmi);
  // KubeVirt counts at least one GiB; an unknown size counts as 8 GiB rather than as nothing
  const gib = bytes === undefined ? 8 : Math.max(1, bytes / GIB);
  const secs = Math.ceil(perGiB * gib + config.migrationTimeoutMargin);
  const size = bytes === undefined ? 'memory unknown, 8' : Number(gib.toFixed(1));
  return {
    ms: secs * 1000,
    why: `${perGiB}s per GiB × ${size} GiB + ${config.migrationTimeoutMargin}s margin`,
  };
}
