import type { KubevirtConfig } from '../../config/schema.ts';
import type { PlannedAction } from '../../core/backends/plugin.ts';
import { invalidPolicy, MAINTENANCE_ANNOTATION, type PolicyRead } from './policy.ts';
import type { ClusterSettings, EvictionStrategy, Vmi } from './types.ts';

/** What happens to a VMI when its node is evacuated ('halt': drainer stops it, 'notify': its owner first). */
export type VmiClass = 'migrate' | 'blocked' | 'stop' | 'external' | 'halt' | 'notify';

/** A VMI still on its node: not finished and not being deleted. */
export const stillHere = (v: Vmi): boolean =>
  !v.metadata.deletionTimestamp && v.status?.phase !== 'Succeeded' && v.status?.phase !== 'Failed';

export interface Classified {
  readonly vmi: Vmi;
  readonly key: string; // namespace/name
  readonly strategy: EvictionStrategy;
  readonly migratable: boolean;
  readonly klass: VmiClass;
  /** The VirtualMachine that owns it (drainer.dev/maintenance: stop stops that). */
  readonly vm?: string;
  /** Why it cannot live-migrate (the LiveMigratable condition's reason), when it cannot. */
  readonly reason?: string;
  readonly action: PlannedAction;
  /** Its drainer.dev/maintenance as read (the plan's WHY names where a choice came from). */
  readonly maintenance: PolicyRead;
}

export const vmiKey = (vmi: Vmi): string => `${vmi.metadata.namespace ?? 'default'}/${vmi.metadata.name}`;

/** The VMI's own strategy wins, else the cluster's (itself defaulting to None). */
export function effectiveStrategy(vmi: Vmi, cluster: ClusterSettings): EvictionStrategy {
  const own = vmi.spec?.evictionStrategy;
  return own === 'None' || own === 'LiveMigrate' || own === 'LiveMigrateIfPossible' || own === 'External'
    ? own
    : cluster.evictionStrategy;
}

function liveMigratable(vmi: Vmi): { migratable: boolean; reason?: string } {
  const c = vmi.status?.conditions?.find((x) => x.type === 'LiveMigratable');
  if (c?.status === 'True') return { migratable: true };
  return { migratable: false, reason: c?.reason ?? c?.message ?? 'no LiveMigratable condition' };
}

function classOf(strategy: EvictionStrategy, migratable: boolean, external: External): VmiClass {
  switch (strategy) {
    case 'LiveMigrate':
      return migratable ? 'migrate' : 'blocked';
    case 'LiveMigrateIfPossible':
      return migratable ? 'migrate' : 'stop';
    case 'External':
      // KubeVirt reserves it for another controller (mark); drainer as that controller (migrate)
      // moves it like a LiveMigrate VMI
      return external === 'mark' ? 'external' : migratable ? 'migrate' : 'blocked';
    case 'None':
      return 'stop';
  }
}

/** The planned action for a class under the configured policy for VMIs that cannot migrate. */
function actionOf(klass: VmiClass, policy: KubevirtConfig['nonMigratable']): PlannedAction {
  if (klass === 'migrate') return 'live-migrate';
  if (klass === 'external') return 'external';
  if (klass === 'stop') return 'shutdown';
  return policy === 'block' ? 'none' : policy === 'shutdown' ? 'shutdown' : 'skip';
}

function reasonOf(klass: VmiClass, strategy: EvictionStrategy, notMigratable: string | undefined): string {
  if (klass === 'blocked') return notMigratable ?? 'not live-migratable';
  if (strategy === 'LiveMigrateIfPossible')
    return `evictionStrategy LiveMigrateIfPossible, not live-migratable: ${notMigratable ?? 'unknown'}`;
  return `evictionStrategy ${strategy}`;
}

type External = KubevirtConfig['external'];
const LIVE: PolicyRead = { policy: 'live', from: 'default' };

export function classify(
  vmi: Vmi,
  cluster: ClusterSettings,
  policy: KubevirtConfig['nonMigratable'],
  external: External = 'mark',
  maintenance: PolicyRead = LIVE,
  vm?: string,
): Classified {
  const strategy = effectiveStrategy(vmi, cluster);
  const { migratable, reason } = liveMigratable(vmi);
  const base = { vmi, key: vmiKey(vmi), strategy, migratable, maintenance, ...(vm ? { vm } : {}) };
  if ('invalid' in maintenance) {
    // refused before the first change, whatever nonMigratable says
    return { ...base, klass: 'blocked', reason: invalidPolicy(maintenance, vmiKey(vmi)), action: 'none' };
  }
  if (maintenance.policy === 'stop')
    return { ...base, klass: 'halt', reason: `${MAINTENANCE_ANNOTATION}: stop`, action: 'shutdown' };
  const klass = classOf(strategy, migratable, external);
  if (maintenance.policy === 'notify' && klass === 'migrate')
    return { ...base, klass: 'notify', reason: `${MAINTENANCE_ANNOTATION}: notify`, action: 'notify' };
  return {
    ...base,
    klass,
    ...(klass === 'migrate' ? {} : { reason: reasonOf(klass, strategy, reason) }),
    action: actionOf(klass, policy),
  };
}

/** Done = running elsewhere after a completed, not failed, migration. */
export function migratedAway(vmi: Vmi | undefined, node: string): boolean {
  if (!vmi) return false;
  const ms = vmi.status?.migrationState;
  return (
    !!vmi.status?.nodeName && vmi.status.nodeName !== node && ms?.completed === true && ms.failed !== true
  );
}
