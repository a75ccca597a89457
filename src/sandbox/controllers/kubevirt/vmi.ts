// Facts about VMIs, their virt-launcher pods and migrations, shared by the KubeVirt simulation.
import type { KubeObject } from '../../kube/types.ts';
import type { EvictionStrategy } from '../../scenario.ts';
import { RES, type StoreLike } from '../store.ts';
import { isActive, podNode } from '../util.ts';
import type { KubevirtSettings } from './config.ts';

/** Sandbox-only knobs, kept as annotations so a VMI created with kubectl can use them too. */
export const ANN = {
  node: 'sandbox.drainer.dev/node',
  notMigratable: 'sandbox.drainer.dev/not-migratable-reason',
  migrationSeconds: 'sandbox.drainer.dev/migration-seconds',
  failFirstAttempts: 'sandbox.drainer.dev/fail-first-attempts',
} as const;

export const EVACUATION_ANNOTATION = 'kubevirt.io/evacuationMigration';
export const MIGRATION_FINALIZER = 'kubevirt.io/migrationJobFinalize';
export const MIGRATION_JOB_LABEL = 'kubevirt.io/migrationJobUID';

export interface MigrationState {
  migrationUid?: string;
  sourceNode?: string;
  targetNode?: string;
  targetPod?: string;
  startTimestamp?: string;
  endTimestamp?: string;
  completed?: boolean;
  failed?: boolean;
  abortRequested?: boolean;
  abortStatus?: string;
  mode?: string;
  failureReason?: string;
}

export interface VmiStatus {
  phase?: string;
  nodeName?: string;
  evacuationNodeName?: string;
  migrationState?: MigrationState;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
  [k: string]: unknown;
}

export const vmiStatus = (vmi: KubeObject): VmiStatus => (vmi.status ?? {}) as VmiStatus;
export const vmiKey = (vmi: KubeObject): string => `${vmi.metadata.namespace}/${vmi.metadata.name}`;

export function effectiveStrategy(vmi: KubeObject, s: KubevirtSettings): EvictionStrategy {
  return (
    (vmi.spec as { evictionStrategy?: EvictionStrategy })?.evictionStrategy ?? s.evictionStrategy ?? 'None'
  );
}

/** undefined when the VMI can live-migrate, else the LiveMigratable=False reason. */
export const notMigratableReason = (vmi: KubeObject): string | undefined =>
  vmi.metadata.annotations?.[ANN.notMigratable] || undefined;

export const isRunning = (vmi: KubeObject): boolean =>
  vmiStatus(vmi).phase === 'Running' && Boolean(vmiStatus(vmi).nodeName) && !vmi.metadata.deletionTimestamp;

/** Whether an evacuation would move this VMI by live migration. */
export function migratesOnEvacuation(vmi: KubeObject, s: KubevirtSettings): boolean {
  const strategy = effectiveStrategy(vmi, s);
  return (strategy === 'LiveMigrate' || strategy === 'LiveMigrateIfPossible') && !notMigratableReason(vmi);
}

export const launchersOf = (store: StoreLike, vmi: KubeObject): KubeObject[] =>
  store
    .list(RES.pods, { namespace: vmi.metadata.namespace, labelSelector: 'kubevirt.io=virt-launcher' })
    .filter((p) => p.metadata.labels?.['kubevirt.io/created-by'] === vmi.metadata.uid);

/** The launcher pod the VMI runs in now (on its status.nodeName). */
export const activeLauncher = (store: StoreLike, vmi: KubeObject): KubeObject | undefined =>
  launchersOf(store, vmi).find((p) => podNode(p) === vmiStatus(vmi).nodeName && isActive(p));

export function launcherPod(vmi: KubeObject, node: string, migrationUid?: string): KubeObject {
  const name = vmi.metadata.name ?? '';
  const labels: Record<string, string> = {
    ...vmi.metadata.labels,
    'kubevirt.io': 'virt-launcher',
    'kubevirt.io/created-by': vmi.metadata.uid ?? '',
    'vm.kubevirt.io/name': name,
  };
  delete labels['kubevirt.io/nodeName'];
  if (migrationUid) labels[MIGRATION_JOB_LABEL] = migrationUid;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `virt-launcher-${name}-`,
      namespace: vmi.metadata.namespace,
      labels,
      annotations: { 'kubevirt.io/domain': name, 'kubectl.kubernetes.io/default-container': 'compute' },
      ownerReferences: [
        {
          apiVersion: 'kubevirt.io/v1',
          kind: 'VirtualMachineInstance',
          name,
          uid: vmi.metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: {
      nodeName: node,
      // as virt-controller renders it: the guest's memory plus the launcher's overhead, and the
      // VMI's nodeSelector with kubevirt.io/schedulable
      nodeSelector: { ...vmiSpec(vmi).nodeSelector, 'kubevirt.io/schedulable': 'true' },
      containers: [
        {
          name: 'compute',
          image: 'quay.io/kubevirt/virt-launcher:v1.5.0',
          resources: { requests: launcherRequests(vmi) },
        },
      ],
      volumes: [
        { name: 'private', emptyDir: {} },
        { name: 'public', emptyDir: {} },
      ],
      terminationGracePeriodSeconds: 30,
      restartPolicy: 'Never',
    },
  };
}

export function liveMigratableCondition(vmi: KubeObject) {
  const reason = notMigratableReason(vmi);
  return reason
    ? {
        type: 'LiveMigratable',
        status: 'False',
        reason,
        message: `cannot migrate VMI: ${reason}`,
        lastProbeTime: null,
        lastTransitionTime: null,
      }
    : { type: 'LiveMigratable', status: 'True', lastProbeTime: null, lastTransitionTime: null };
}

interface VmiSpecLite {
  nodeSelector?: Record<string, string>;
  domain?: { resources?: { requests?: { memory?: string; cpu?: string } }; cpu?: { cores?: number } };
}

const vmiSpec = (vmi: KubeObject): VmiSpecLite => (vmi as { spec?: VmiSpecLite }).spec ?? {};

/** Guest memory + ~250 MiB launcher overhead; cpu as requested, else 100m per core. */
function launcherRequests(vmi: KubeObject): Record<string, string> {
  const r = vmiSpec(vmi).domain?.resources?.requests ?? {};
  const mem = /^(\d+)(Mi|Gi)$/.exec(r.memory ?? '');
  const mib = mem ? Number(mem[1]) * (mem[2] === 'Gi' ? 1024 : 1) : 0;
  const cores = vmiSpec(vmi).domain?.cpu?.cores ?? 1;
  return { memory: `${mib + 250}Mi`, cpu: r.cpu ?? `${cores * 100}m` };
}
