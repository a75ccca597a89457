// The Prometheus blocker as a read-only command sees it now (`drainer plan` and `drainer status`
// alike): the fleet's shared verdict (the drainer-blockers Lease) while an agent keeps it fresh,
// else one question to Prometheus. Writes nothing; never "none firing" for a question not answered.
import type { FleetConfig } from '../../config/schema.ts';
import type { KubeClients } from '../../kube/client.ts';
import type { KubeLease } from '../../kube/lease.ts';
import { firingAlerts } from './prometheus.ts';
import { BLOCKERS_LEASE, parseVerdict, type Verdict } from './shared-verdict.ts';

export async function verdictNow(
  k: KubeClients,
  fleet: Pick<FleetConfig, 'namespace' | 'blockers'>,
  signal: AbortSignal,
  now = Date.now(),
): Promise<Verdict> {
  const prom = fleet.blockers.prometheus;
  const shared = await k
    .request<KubeLease>({
      path: `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(fleet.namespace)}/leases/${BLOCKERS_LEASE}`,
      signal,
    })
    .then((l) => parseVerdict(l.metadata.annotations))
    .catch(() => undefined); // none shared (or not readable): ask Prometheus below
  if (shared && now - shared.at < fleet.blockers.interval * 1000) return shared;
  if (!prom) return { at: now, firing: [] };
  return firingAlerts(prom, signal).then(
    (firing) => ({ at: now, firing }),
    (err: unknown) => ({ at: now, firing: [], error: err instanceof Error ? err.message : String(err) }),
  );
}

/** "cannot be evaluated: …", "alert firing: A, B", or '' (nothing holds): after "Prometheus ". */
export const verdictText = (v: Pick<Verdict, 'firing' | 'error'>): string =>
  v.error ? `cannot be evaluated: ${v.error}` : v.firing.length ? `alert firing: ${v.firing.join(', ')}` : '';
