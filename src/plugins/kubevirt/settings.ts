import {
  EVICTION_STRATEGIES,
  type ClusterSettings,
  type EvictionStrategy,
  type KubeVirtCr,
} from './types.ts';

export const DEFAULT_DRAIN_TAINT_KEY = 'kubevirt.io/drain';

const NOT_INSTALLED: ClusterSettings = {
  installed: false,
  drainTaintKey: DEFAULT_DRAIN_TAINT_KEY,
  evictionStrategy: 'None',
  parallelMigrationsPerCluster: 5,
  parallelOutboundMigrationsPerNode: 2,
};

const asStrategy = (v: unknown): EvictionStrategy | undefined =>
  (EVICTION_STRATEGIES as readonly unknown[]).includes(v) ? (v as EvictionStrategy) : undefined;

const positiveInt = (v: unknown, fallback: number): number =>
  typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : fallback;

/**
 * Reads the settings from the KubeVirt CRs (undefined = the kubevirts CRD is absent).
 * The first CR whose phase is Deployed wins; else the first one; none means not installed.
 */
export function clusterSettings(kubevirts: readonly KubeVirtCr[] | undefined): ClusterSettings {
  if (!kubevirts || kubevirts.length === 0) return NOT_INSTALLED;
  const cr = kubevirts.find((k) => k.status?.phase === 'Deployed') ?? kubevirts[0];
  const conf = cr?.spec?.configuration ?? {};
  const migrations = conf.migrations ?? {};
  const perGiB = migrations.completionTimeoutPerGiB;
  return {
    installed: true,
    drainTaintKey:
      typeof migrations.nodeDrainTaintKey === 'string' && migrations.nodeDrainTaintKey
        ? migrations.nodeDrainTaintKey
        : DEFAULT_DRAIN_TAINT_KEY,
    evictionStrategy: asStrategy(conf.evictionStrategy) ?? 'None',
    parallelMigrationsPerCluster: positiveInt(migrations.parallelMigrationsPerCluster, 5),
    parallelOutboundMigrationsPerNode: positiveInt(migrations.parallelOutboundMigrationsPerNode, 2),
    ...(typeof perGiB === 'number' && perGiB > 0 ? { completionTimeoutPerGiB: perGiB } : {}),
  };
}
