// Reads the Kubernetes half of a World with GETs only: Nodes (with their records), NodeMaintenances,
// the gate pods and PDBs and the Leases in drainer's namespace, the Events of Nodes, and KubeVirt's
// VMIs and migrations where KubeVirt is installed.
import { goDurationSeconds } from '../core/capi/timeouts.ts';
import { hasHook, type MachineObject } from '../core/capi/machine.ts';
import { machinesPath } from '../core/capi/kube-port.ts';
import { readRecord, STATE_ANNOTATION } from '../core/record/record.ts';
import { isForbiddenError, isNotFoundError } from '../errors.ts';
import type { KubeClients } from '../kube/client.ts';
import { GATE_COMPONENT, GATE_FINALIZER, pdbsPath, podsPath } from '../kube/gate.ts';
import { leasesPath, type KubeLease } from '../kube/lease.ts';
import { listNodeMaintenances } from '../kube/maintenance.ts';
import type { KubeNode, KubeObject, KubePod } from '../kube/types.ts';
import { placementOf } from '../kube/placement.ts';
import { listAll } from '../kube/watch.ts';
import type {
  World,
  WorldEvent,
  WorldGatePdb,
  WorldGatePod,
  WorldLease,
  WorldMaintenance,
  WorldNode,
  WorldDaemonSet,
  WorldVm,
  WorldMachine,
  WorldNodePool,
  WorldVmi,
  WorldVmiMove,
} from './world.ts';
import { VM_STOP_MARK } from './rules/vm-stop-mark-agent.ts';

export type KubeWorld = Omit<World, 'nova' | 'observations'>;

const GATE_SELECTOR = `app.kubernetes.io/component=${GATE_COMPONENT}`;
const KV = '/apis/kubevirt.io/v1';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

type Obj = KubeObject & { status?: Record<string, unknown>; spec?: Record<string, unknown> };

const toNode = (n: KubeNode): WorldNode => ({
  name: n.metadata.name ?? '',
  unschedulable: (n.spec as { unschedulable?: boolean } | undefined)?.unschedulable === true,
  record: readRecord(n.metadata.annotations?.[STATE_ANNOTATION]),
  annotations: { ...n.metadata.annotations },
  labels: { ...n.metadata.labels },
});

function toMaintenance(nm: Obj): WorldMaintenance {
  const status = nm.status as
    { phase?: string; conditions?: { type?: string; reason?: string }[] } | undefined;
  const reason = status?.conditions?.find((c) => c.type === 'Evacuated')?.reason;
  return {
    name: nm.metadata.name ?? '',
    apiVersion: nm.apiVersion ?? '',
    nodeName: str(nm.spec?.nodeName),
    deleting: !!nm.metadata.deletionTimestamp,
    ...(status?.phase ? { phase: status.phase } : {}),
    ...(reason ? { reason } : {}),
  };
}

function toGatePod(p: KubePod): WorldGatePod {
  const conditions = (p.status?.conditions ?? []) as { type?: string; status?: string }[];
  return {
    name: p.metadata.name ?? '',
    nodeName: p.spec?.nodeName ?? '',
    ...(p.status?.phase ? { phase: p.status.phase } : {}),
    ready: conditions.some((c) => c.type === 'Ready' && c.status === 'True'),
    deleting: !!p.metadata.deletionTimestamp,
    guarded: (p.metadata.finalizers ?? []).includes(GATE_FINALIZER),
  };
}

function toGatePdb(p: Obj): WorldGatePdb {
  const status = p.status as { disruptionsAllowed?: number; observedGeneration?: number } | undefined;
  const generation = p.metadata.generation ?? 1;
  return {
    name: p.metadata.name ?? '',
    ...(status?.disruptionsAllowed !== undefined ? { disruptionsAllowed: status.disruptionsAllowed } : {}),
    observed: (status?.observedGeneration ?? 0) >= generation,
  };
}

const toLease = (l: KubeLease): WorldLease => ({
  name: l.metadata.name ?? '',
  ...(l.metadata.labels?.['app.kubernetes.io/component']
    ? { component: l.metadata.labels['app.kubernetes.io/component'] }
    : {}),
  ...(l.spec?.holderIdentity ? { holder: l.spec.holderIdentity } : {}),
  ...(l.spec?.renewTime ? { renewTime: l.spec.renewTime } : {}),
  ...(l.spec?.leaseDurationSeconds !== undefined ? { durationSeconds: l.spec.leaseDurationSeconds } : {}),
});

type EventObj = KubeObject & {
  reason?: string;
  type?: string;
  message?: string;
  count?: number;
  involvedObject?: { kind?: string; name?: string };
};

const toEvent = (e: EventObj): WorldEvent => {
  const at = e.metadata.creationTimestamp ? Date.parse(e.metadata.creationTimestamp) : NaN;
  return {
    reason: e.reason ?? '',
    ...(e.type ? { type: e.type } : {}),
    kind: e.involvedObject?.kind ?? '',
    name: e.involvedObject?.name ?? '',
    message: e.message ?? '',
    count: e.count ?? 1,
    ...(Number.isNaN(at) ? {} : { at }),
    ...(e.metadata.uid ? { uid: e.metadata.uid } : {}),
  };
};

const toVmi = (v: Obj): WorldVmi => ({
  namespace: v.metadata.namespace ?? '',
  name: v.metadata.name ?? '',
  ...(v.metadata.labels?.['kubevirt.io/nodeName'] ? { node: v.metadata.labels['kubevirt.io/nodeName'] } : {}),
  ...(typeof v.spec?.['evictionStrategy'] === 'string'
    ? { evictionStrategy: v.spec['evictionStrategy'] }
    : {}),
  ...(typeof v.status?.['phase'] === 'string' ? { phase: v.status['phase'] } : {}),
  ...(v.metadata.deletionTimestamp ? { deleting: true } : {}),
  ...createdOf(v),
});

/** metadata.creationTimestamp (whole seconds) and uid, where given. */
function createdOf(o: Obj): { createdAt?: number; uid?: string } {
  const at = Date.parse(o.metadata.creationTimestamp ?? '');
  return {
    ...(Number.isNaN(at) ? {} : { createdAt: at }),
    ...(o.metadata.uid ? { uid: o.metadata.uid } : {}),
  };
}

const toVm = (v: Obj): WorldVm => ({
  namespace: v.metadata.namespace ?? '',
  name: v.metadata.name ?? '',
  mark: v.metadata.annotations?.[VM_STOP_MARK] ?? '',
  running: v.status?.['ready'] === true,
});

function toVmiMove(m: Obj): WorldVmiMove {
  const st =
    (m.status as { phase?: string; migrationState?: Record<string, string | undefined> } | undefined) ?? {};
  const ms = st.migrationState ?? {};
  const ended = ms.endTimestamp ? Date.parse(ms.endTimestamp) : undefined;
  return {
    namespace: m.metadata.namespace ?? '',
    vmi: str(m.spec?.vmiName),
    ...(ms.sourceNode ? { source: ms.sourceNode } : {}),
    ...(ms.targetNode ? { target: ms.targetNode } : {}),
    ...(st.phase ? { phase: st.phase } : {}),
    ...(ended !== undefined && !Number.isNaN(ended) ? { endedAt: ended } : {}),
    ...(m.metadata.uid ? { uid: m.metadata.uid } : {}),
  };
}

function toMachine(o: KubeObject): WorldMachine {
  const m = o as MachineObject;
  const node = m.status?.nodeRef?.name;
  return {
    namespace: o.metadata.namespace ?? '',
    name: o.metadata.name ?? '',
    ...(node ? { node } : {}),
    deleting: o.metadata.deletionTimestamp !== undefined,
    hooked: hasHook(m),
    ...optionalSeconds('drainTimeoutSeconds', m.spec?.nodeDrainTimeout),
  };
}

const optionalSeconds = <K extends string>(key: K, text: string | undefined) => {
  const seconds = goDurationSeconds(text);
  return seconds === undefined ? {} : ({ [key]: seconds } as Record<K, number>);
};

function toNodePool(o: Obj): WorldNodePool {
  const spec = (o.spec?.['template'] as { spec?: { terminationGracePeriod?: string } } | undefined)?.spec;
  return {
    name: o.metadata.name ?? '',
    ...optionalSeconds('terminationGracePeriodSeconds', spec?.terminationGracePeriod),
  };
}

function toDaemonSet(d: KubeObject): WorldDaemonSet {
  return {
    name: d.metadata.name ?? '',
    ...placementOf(d),
    ...(d.metadata.deletionTimestamp ? { deleting: true } : {}),
  };
}

/** A list that may be absent (CRD not installed) or forbidden (no rights): undefined then. */
async function optional<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isNotFoundError(err) || isForbiddenError(err)) return undefined;
    throw err;
  }
}

export async function readKubeWorld(
  k: KubeClients,
  o: { namespace: string; signal?: AbortSignal; now?: () => Date },
): Promise<KubeWorld> {
  const signal = o.signal ? { signal: o.signal } : {};
  const list = <T extends KubeObject>(path: string, query?: Record<string, string>) =>
    listAll<T>(k, { path, ...(query ? { query } : {}), ...signal }).then((l) => l.items);
  const [nodes, maintenances, pods, pdbs, leases, events, vmis, moves, daemonSets, vms, machines, pools] =
    await Promise.all([
      list<KubeNode>('/api/v1/nodes'),
      listNodeMaintenances(k, signal),
      list<KubePod>(podsPath(o.namespace), { labelSelector: GATE_SELECTOR }),
      list<Obj>(pdbsPath(o.namespace), { labelSelector: GATE_SELECTOR }),
      optional(() => list<KubeLease>(leasesPath(o.namespace))),
      list<EventObj>('/api/v1/namespaces/default/events'),
      optional(() => list<KubeObject>(`${KV}/virtualmachineinstances`)),
      optional(() => list<Obj>(`${KV}/virtualmachineinstancemigrations`)),
      // drainer's agents' DaemonSet(s): drainer's namespace is its own
      optional(() =>
        list<KubeObject>(`/apis/apps/v1/namespaces/${encodeURIComponent(o.namespace)}/daemonsets`),
      ),
      // VirtualMachines drainer stopped and marked
      optional(() => list<Obj>(`${KV}/virtualmachines`, { labelSelector: VM_STOP_MARK })),
      // Cluster API Machines (drainer's pre-drain hook on them)
      optional(() => list<KubeObject>(machinesPath)),
      // Karpenter NodePools (their terminationGracePeriod)
      optional(() => list<Obj>('/apis/karpenter.sh/v1/nodepools')),
    ]);
  return {
    at: o.now?.() ?? new Date(),
    nodes: nodes.map(toNode),
    maintenances: maintenances.items.map((m) => toMaintenance(m as Obj)),
    gatePods: pods.map(toGatePod),
    gatePdbs: pdbs.map(toGatePdb),
    ...(leases ? { leases: leases.map(toLease) } : {}),
    events: events.filter((e) => e.involvedObject?.kind === 'Node').map(toEvent),
    ...(vmis ? { vmis: vmis.map(toVmi) } : {}),
    ...(moves ? { vmiMoves: moves.map(toVmiMove) } : {}),
    ...(daemonSets ? { daemonSets: daemonSets.map(toDaemonSet) } : {}),
    ...(vms ? { vms: vms.map(toVm) } : {}),
    ...(machines ? { machines: machines.map(toMachine) } : {}),
    ...(pools ? { nodePools: pools.map(toNodePool) } : {}),
  };
}
