// The few fields of KubeVirt objects the plugin reads (kubevirt.io/v1).

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  ownerReferences?: { kind?: string; name?: string; uid?: string }[];
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface MigrationState {
  sourceNode?: string;
  targetNode?: string;
  startTimestamp?: string;
  endTimestamp?: string;
  completed?: boolean;
  failed?: boolean;
  abortStatus?: string;
  migrationUid?: string;
  failureReason?: string;
}

export interface Vmi {
  metadata: ObjectMeta;
  spec?: {
    evictionStrategy?: string;
    domain?: { memory?: { guest?: string }; resources?: { requests?: { memory?: string } } };
  };
  status?: {
    nodeName?: string;
    phase?: string;
    conditions?: Condition[];
    migrationState?: MigrationState;
    evacuationNodeName?: string;
    memory?: { guestCurrent?: string };
    /** LiveMigration, or BlockMigration when local disks are copied too. */
    migrationMethod?: string;
    volumeStatus?: { name?: string; size?: number; persistentVolumeClaimInfo?: object }[];
    migratedVolumes?: { sourcePVCInfo?: { capacity?: { storage?: string } } }[];
  };
}

/** The fields of a VirtualMachine the plugin reads. */
export interface VmLite {
  metadata: ObjectMeta;
  spec?: { runStrategy?: string; running?: boolean };
  /** Stop and start requests virt-api queued for the VM controller (Manual, RerunOnFailure). */
  status?: { stateChangeRequests?: { action?: string; uid?: string }[] };
}

export interface Vmim {
  metadata: ObjectMeta;
  spec?: { vmiName?: string };
  status?: { phase?: string; migrationState?: MigrationState };
}

export interface PodLite {
  metadata: ObjectMeta;
  status?: { phase?: string };
}

export const EVICTION_STRATEGIES = ['None', 'LiveMigrate', 'LiveMigrateIfPossible', 'External'] as const;
export type EvictionStrategy = (typeof EVICTION_STRATEGIES)[number];

/** KubeVirt cluster settings drainer relies on (from the KubeVirt CR). */
export interface ClusterSettings {
  readonly installed: boolean;
  readonly drainTaintKey: string;
  readonly evictionStrategy: EvictionStrategy;
  readonly parallelMigrationsPerCluster: number;
  readonly parallelOutboundMigrationsPerNode: number;
  /** spec.configuration.migrations.completionTimeoutPerGiB, when the CR sets it. */
  readonly completionTimeoutPerGiB?: number;
}

/** The KubeVirt CR fields read for the cluster settings. */
export interface KubeVirtCr {
  metadata?: ObjectMeta;
  spec?: {
    configuration?: {
      evictionStrategy?: unknown;
      migrations?: {
        nodeDrainTaintKey?: unknown;
        parallelMigrationsPerCluster?: unknown;
        parallelOutboundMigrationsPerNode?: unknown;
        completionTimeoutPerGiB?: unknown;
      };
    };
  };
  status?: { phase?: string };
}
