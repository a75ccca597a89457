// Writes a scenario's objects into the API server's store: namespaces, nodes, KubeVirt, workloads,
// PDBs. Pods start Running at once (the kubelet's start delay is for pods created later).
import { RES, tryDelete, tryGet, type StoreLike } from './controllers/store.ts';
import { nextPodIp, runningPodStatus } from './controllers/util.ts';
import type { KubeObject } from './kube/types.ts';
import type { Scenario } from './scenario.ts';
import {
  daemonSetObject,
  kubevirtObject,
  namespaceObject,
  namespacesOf,
  nodeObject,
  ownerLabel,
  pdbObject,
  podObject,
  replicaSetObject,
  vmiObject,
} from './scenario-objects.ts';

interface PodShape {
  namespace: string;
  labels: Record<string, string>;
  emptyDir: boolean;
  graceSeconds: number;
}

interface Owner {
  kind: 'ReplicaSet' | 'DaemonSet';
  name: string;
  shape: PodShape;
  /** Where each pod goes. */
  nodes: string[];
}

const KUBEVIRT_CRDS = [
  'kubevirts',
  'virtualmachineinstances',
  'virtualmachines',
  'virtualmachineinstancemigrations',
];

function createWithStatus(store: StoreLike, res: string, obj: KubeObject): KubeObject {
  const created = store.create(res, obj);
  if (!obj.status) return created;
  return store.updateStatus(res, { ...created, status: obj.status });
}

/** Owners from `replicasets:`/`daemonsets:` and from pods that name one. */
function ownersOf(s: Scenario): Owner[] {
  const schedulable = s.nodes.filter(
    (n) => !n.unschedulable && !n.taints.some((t) => t.effect !== 'PreferNoSchedule'),
  );
  const spread = (count: number, over: string[]) =>
    Array.from({ length: count }, (_, i) => over[i % over.length] ?? '');
  const owners = new Map<string, Owner>();
  for (const rs of s.replicasets) {
    const over = rs.nodes ?? schedulable.map((n) => n.name);
    owners.set(`ReplicaSet/${rs.namespace}/${rs.name}`, {
      kind: 'ReplicaSet',
      name: rs.name,
      shape: rs,
      nodes: over.length ? spread(rs.replicas, over) : [],
    });
  }
  for (const ds of s.daemonsets) {
    owners.set(`DaemonSet/${ds.namespace}/${ds.name}`, {
      kind: 'DaemonSet',
      name: ds.name,
      shape: ds,
      nodes: ds.nodes ?? s.nodes.map((n) => n.name),
    });
  }
  for (const p of s.pods) {
    if (p.owner === 'none') continue;
    const name = p.ownerName ?? p.name;
    const key = `${p.owner}/${p.namespace}/${name}`;
    const o = owners.get(key) ?? { kind: p.owner, name, shape: p, nodes: [] };
    o.nodes.push(p.node);
    owners.set(key, o);
  }
  return [...owners.values()];
}

function populateOwner(store: StoreLike, o: Owner, podStatus: (p: KubeObject) => KubeObject): void {
  const extra = ownerLabel(o.name);
  const owner =
    o.kind === 'ReplicaSet'
      ? store.create(
          RES.replicasets,
          replicaSetObject(o.name, { ...o.shape, replicas: o.nodes.length }, extra),
        )
      : store.create(RES.daemonsets, daemonSetObject(o.name, o.shape, extra));
  for (const node of o.nodes) {
    const { namespace, labels, emptyDir, graceSeconds } = o.shape; // not the owner's name: pods get generated ones
    const shape = { namespace, labels, emptyDir, graceSeconds };
    podStatus(store.create(RES.pods, podObject(shape, node, owner, { daemon: o.kind === 'DaemonSet' })));
  }
  if (o.kind === 'DaemonSet') {
    const n = o.nodes.length;
    store.updateStatus(RES.daemonsets, {
      ...owner,
      status: {
        currentNumberScheduled: n,
        desiredNumberScheduled: n,
        numberAvailable: n,
        numberMisscheduled: 0,
        numberReady: n,
        updatedNumberScheduled: n,
        observedGeneration: 1,
      },
    });
  }
}

export function populate(store: StoreLike, s: Scenario): void {
  const now = store.stamps.at();
  for (const ns of namespacesOf(s)) {
    if (tryGet(store, RES.namespaces, undefined, ns)) continue; // the system ones exist already
    createWithStatus(store, RES.namespaces, { ...namespaceObject(ns), status: { phase: 'Active' } });
  }
  s.nodes.forEach((n, i) => createWithStatus(store, RES.nodes, nodeObject(n, i, now)));

  if (s.kubevirt.installed) store.create(RES.kubevirts, kubevirtObject(s));
  else for (const plural of KUBEVIRT_CRDS) tryDelete(store, RES.crds, undefined, `${plural}.kubevirt.io`);

  const running = (pod: KubeObject) =>
    store.updateStatus(RES.pods, { ...pod, status: runningPodStatus(pod, now, nextPodIp()) });
  for (const o of ownersOf(s)) populateOwner(store, o, running);
  for (const p of s.pods.filter((x) => x.owner === 'none'))
    running(store.create(RES.pods, podObject(p, p.node)));
  for (const pdb of s.pdbs) store.create(RES.pdbs, pdbObject(pdb));
  if (s.kubevirt.installed) for (const v of s.kubevirt.vmis) store.create(RES.vmis, vmiObject(v));
}
