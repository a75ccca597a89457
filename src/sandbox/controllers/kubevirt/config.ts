// The KubeVirt CR settings the simulation follows (read on every use: users may edit the CR).
import { RES, type StoreLike } from '../store.ts';
import type { EvictionStrategy } from '../../scenario.ts';

export interface KubevirtSettings {
  installed: boolean;
  drainTaintKey: string;
  evictionStrategy?: EvictionStrategy;
  parallelMigrationsPerCluster: number;
  parallelOutboundMigrationsPerNode: number;
}

interface KubevirtSpec {
  configuration?: {
    evictionStrategy?: EvictionStrategy;
    migrations?: {
      nodeDrainTaintKey?: string;
      parallelMigrationsPerCluster?: number;
      parallelOutboundMigrationsPerNode?: number;
    };
  };
}

export function readSettings(store: StoreLike): KubevirtSettings {
  let cr;
  try {
    cr = store.list(RES.kubevirts)[0];
  } catch {
    cr = undefined; // CRD absent: KubeVirt not installed
  }
  const spec = (cr?.spec ?? {}) as KubevirtSpec;
  const m = spec.configuration?.migrations ?? {};
  const s: KubevirtSettings = {
    installed: Boolean(cr),
    drainTaintKey: m.nodeDrainTaintKey || 'kubevirt.io/drain',
    parallelMigrationsPerCluster: m.parallelMigrationsPerCluster ?? 5,
    parallelOutboundMigrationsPerNode: m.parallelOutboundMigrationsPerNode ?? 2,
  };
  if (spec.configuration?.evictionStrategy) s.evictionStrategy = spec.configuration.evictionStrategy;
  return s;
}
