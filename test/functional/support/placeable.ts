// Whether Nova can place a boot on a host now, and waiting for Placement to catch up with Nova.
//
// A compute service enabled in Nova can still be hidden from the scheduler: Placement answers no
// allocation candidate while the host's resource provider is missing, has no inventory yet (a
// nova-compute that is up but has not reported its resources), or still carries
// COMPUTE_STATUS_DISABLED. nova-compute clears that trait when the service is enabled, but only on
// a best-effort try: a 409 from Placement (a migration's allocation cleanup on the same provider at
// that moment) leaves it for the update_available_resource periodic task, a minute later. A boot
// in between goes ERROR "No valid host was found" (CI, owner-actions right after microversion's
// restore). The harness waits out that lag; a host Nova itself disables or reports down is no lag,
// and is booted onto as asked, so Nova's real answer stands.
import { waitFor } from './wait.ts';

/** What Nova and Placement say about one compute host. */
export interface HostView {
  serviceEnabled: boolean;
  serviceUp: boolean;
  /** The host's resource provider, absent when Placement has none of that name. */
  provider?: { inventory: readonly string[]; traits: readonly string[] };
}

/** What a boot needs from Placement (the flavor's three classes). */
const CLASSES = ['VCPU', 'MEMORY_MB', 'DISK_GB'] as const;
export const DISABLED_TRAIT = 'COMPUTE_STATUS_DISABLED';

/** Why Placement would not place a boot on a host Nova has enabled and up; undefined when nothing lags. */
export function placementLag(v: HostView): string | undefined {
  if (!v.serviceEnabled || !v.serviceUp) return undefined; // Nova's own state: not a lag to wait out
  if (!v.provider) return 'no resource provider in Placement';
  const missing = CLASSES.filter((c) => !v.provider!.inventory.includes(c));
  if (missing.length > 0) return `no ${missing.join(', ')} inventory in Placement`;
  if (v.provider.traits.includes(DISABLED_TRAIT)) return `Placement still marks it ${DISABLED_TRAIT}`;
  return undefined;
}

/**
 * Waits until Placement agrees with Nova about `host` (see placementLag). The default deadline
 * covers two runs of nova-compute's periodic resource update (60 s each by default).
 */
export async function untilPlacementAgrees(
  host: string,
  look: () => Promise<HostView>,
  { timeoutMs = 150_000, intervalMs = 1_000 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  let lag: string | undefined;
  await waitFor(
    async () => {
      lag = placementLag(await look());
      return lag === undefined ? true : undefined;
    },
    { what: `Placement to agree that ${host} is enabled`, timeoutMs, intervalMs },
    () => `${host}: ${lag}`,
  );
}
