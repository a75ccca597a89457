// The KubeVirt CR settings the simulation follows (read on every use: users may edit the CR).
import { RES, type StoreLike } from '../store.ts';
import type { EvictionStrategy } from '../../scenario.ts';

/** The newest KubeVirt minor version the emulation follows (v1.<minor>). */
export const NEWEST_MINOR = 9;

export interface KubevirtSettings {
  installed: boolean;
  /** The emulated KubeVirt's minor version (v1.<minor>), from the CR's status.observedKubeVirtVersion. */
  minor: number;
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
  const observed = (cr?.status as { observedKubeVirtVersion?: string } | undefined)?.observedKubeVirtVersion;
  const minor = /^v1\.(\d+)/.exec(observed ?? '')?.[1];
  const m = spec.configuration?.migrations ?? {};
  const s: KubevirtSettings = {
    installed: Boolean(cr),
    minor: minor === undefined ? NEWEST_MINOR : Number(minor),
    drainTaintKey: m.nodeDrainTaintKey || 'kubevirt.io/drain',
    parallelMigrationsPerCluster: m.parallelMigrationsPerCluster ?? 5,
    parallelOutboundMigrationsPerNode: m.parallelOutboundMigrationsPerNode ?? 2,
  };
  if (spec.configuration?.evictionStrategy) s.evictionStrategy = spec.configuration.evictionStrategy;
  return s;
}
