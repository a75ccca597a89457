// The KubeVirt fields drainer's plugin reads: held against the CRD excerpt (kubevirt-crds.test.ts) and against a
// real cluster's CRDs (test/real/08k-kubevirt.test.ts).
/** The fields src/plugins/kubevirt reads (types.ts, classify.ts, tracker.ts, migration-view.ts, timeout.ts). */
export const PLUGIN_READS = {
  VirtualMachineInstance: [
    'spec.evictionStrategy',
    'spec.domain.memory.guest',
    'spec.domain.resources.requests',
    'status.nodeName',
    'status.phase',
    'status.evacuationNodeName',
    'status.conditions[].type',
    'status.conditions[].status',
    'status.conditions[].reason',
    'status.conditions[].message',
    'status.memory.guestCurrent',
    'status.migrationState.migrationUid',
    'status.migrationState.targetNode',
    'status.migrationState.completed',
    'status.migrationState.failed',
    'status.migrationState.failureReason',
  ],
  VirtualMachineInstanceMigration: [
    'spec.vmiName',
    'status.phase',
    'status.migrationState.migrationUid',
    'status.migrationState.targetNode',
    'status.migrationState.failureReason',
  ],
} as const;
