// The gate's GateApi over src/kube: the PDB drainer-gate-<node>-<hash> (owned by the agent DaemonSet, so
// uninstalling drainer garbage-collects it, and with it the pod it controls) and the gate pod, which
// carries the finalizer drainer.dev/gate while it guards the node (deletion-based drains wait too).
// Each call does one step; the DrainGate calls again until what the API server shows is right.
import type { KubeClients } from '../../kube/client.ts';
import {
  createObject,
  deleteObject,
  GATE_FINALIZER,
  gateName,
  gatePdb,
  gatePodName,
  gateAndLegacySelector,
  isGatePodName,
  legacyGateNames,
  gatePdbSpec,
  gatePod,
  getDaemonSet,
  getObject,
  patchMeta,
  pdbsPath,
  podsPath,
  replaceObject,
} from '../../kube/gate.ts';
import type { KubeObject, OwnerReference } from '../../kube/types.ts';
import { isConflictError, isNotFoundError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { GateApi } from './api.ts';
import { effectivePod, hasGateFinalizer, pdbAltered, seeHeld } from './observe.ts';
import { listAll } from '../../kube/watch.ts';
import { getNode } from '../../kube/node.ts';
import { placementOf, placesOn } from '../../kube/placement.ts';

export interface KubeGateOptions {
  readonly k: KubeClients;
  readonly namespace: string;
  readonly daemonSet: string;
  readonly image: string;
  readonly log: Logger;
}

const ownerRef = (o: KubeObject, apiVersion: string, kind: string, controller: boolean): OwnerReference => ({
  apiVersion,
  kind,
  name: o.metadata.name ?? '',
  uid: o.metadata.uid ?? '',
  ...(controller ? { controller: true } : {}),
});

/** A pod that guards nothing any more and must make way for a new one: it has finished. */
const spent = (pod: KubeObject): boolean => {
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
};

const absentIfMissing = (p: Promise<KubeObject>): Promise<KubeObject | undefined> =>
  p.catch((err: unknown) => {
    if (isNotFoundError(err)) return undefined;
    throw err;
  });

/** A PDB not being deleted that the agent DaemonSet does not own (none of its references is it). */
const unowned = (pdb: KubeObject, ds: OwnerReference): boolean =>
  !pdb.metadata.deletionTimestamp && !(pdb.metadata.ownerReferences ?? []).some((r) => r.uid === ds.uid);

/** A 404, or a 409 of a delete whose uid precondition failed: that incarnation is gone. */
const goneOk = (err: unknown): void => {
  if (!isNotFoundError(err) && !isConflictError(err)) throw err;
};

/** Tries of a finalizer patch that meets a newer version of the pod (the kubelet writes its status). */
const UNGUARD_TRIES = 3;

export function kubeGateApi(o: KubeGateOptions): GateApi {
  const { k, namespace, log } = o;
  let owner: Promise<OwnerReference | undefined> | undefined;

  /** The DaemonSet, read once. Without one (run-once, the sandbox) the PDB has no owner. */
  const daemonSet = () =>
    (owner ??= getDaemonSet(k, namespace, o.daemonSet).then(
      (ds) => ownerRef(ds, 'apps/v1', 'DaemonSet', false),
      (err: unknown) => {
        if (!isNotFoundError(err)) {
          owner = undefined;
          throw err;
        }
        log.info(
          { daemonSet: o.daemonSet, namespace },
          'no agent DaemonSet: the drain gate PDB has no owner (delete it by hand after a run-once)',
        );
        return undefined;
      },
    ));

  const ensure = async (path: string, body: KubeObject): Promise<KubeObject> => {
    try {
      return await createObject(k, path, body);
    } catch (err) {
      if (!isConflictError(err)) throw err;
      return getObject(k, path, body.metadata.name ?? '');
    }
  };

  /**
   * The PDB made under a DaemonSet since re-created (or orphaned by its deletion): owned by the one
   * there now, so that uninstalling it garbage-collects the gate.
   */
  const own = async (pdb: KubeObject, ds: OwnerReference | undefined): Promise<KubeObject> => {
    if (!ds || !unowned(pdb, ds)) return pdb;
    const refs = pdb.metadata.ownerReferences ?? [];
    const owned = await patchMeta(k, pdbsPath(namespace), pdb.metadata.name ?? '', {
      resourceVersion: pdb.metadata.resourceVersion,
      ownerReferences: [...refs.filter((r) => r.kind !== 'DaemonSet'), ds],
    });
    log.info(
      { pdb: pdb.metadata.name, daemonSet: ds.name, uid: ds.uid },
      'the drain gate PDB now belongs to the re-created agent DaemonSet',
    );
    return owned;
  };

  /** The PDB, made again if missing and its budget put back if someone changed it. */
  const ensurePdb = async (node: string): Promise<KubeObject> => {
    const ds = await daemonSet();
    let pdb = await ensure(pdbsPath(namespace), gatePdb(namespace, node, ds));
    if (pdb.metadata.deletionTimestamp) return pdb;
    pdb = await own(pdb, ds);
    if (!pdbAltered(node, pdb)) return pdb;
    log.warn(
      { node, pdb: pdb.metadata.name },
      'the drain gate PodDisruptionBudget was altered: restoring it',
    );
    return replaceObject(k, pdbsPath(namespace), { ...pdb, spec: gatePdbSpec(node) });
  };

  /**
   * Drops our finalizer (the pod can then go); other finalizers stay. A 409 means the pod changed
   * since it was read, not that it is gone: read again and patch that version.
   */
  const unguard = async (first: KubeObject): Promise<void> => {
    let pod: KubeObject | undefined = first;
    for (let attempt = 1; pod && hasGateFinalizer(pod); attempt++) {
      const rest = (pod.metadata.finalizers ?? []).filter((f) => f !== GATE_FINALIZER);
      try {
        await patchMeta(k, podsPath(namespace), pod.metadata.name ?? '', {
          resourceVersion: pod.metadata.resourceVersion,
          finalizers: rest,
        });
        return;
      } catch (err) {
        if (isNotFoundError(err)) return;
        if (!isConflictError(err) || attempt >= UNGUARD_TRIES) throw err;
        pod = await absentIfMissing(getObject(k, podsPath(namespace), pod.metadata.name ?? ''));
        if (pod?.metadata.uid !== first.metadata.uid) return;
      }
    }
  };

  /**
   * The node's gate (its pods: its name and the spare's; and its PDB) and what an older version
   * made for it under the names without a hash, by their labels: one list of each kind.
   */
  const gateOf = async (node: string): Promise<NodeGate> => {
    const query = { labelSelector: gateAndLegacySelector(node) };
    const [pods, pdbs] = await Promise.all([
      listAll<KubeObject>(k, { path: podsPath(namespace), query }),
      listAll<KubeObject>(k, { path: pdbsPath(namespace), query }),
    ]);
    const old: readonly string[] = legacyGateNames(node);
    const named = (o: KubeObject, n: readonly string[]) => n.includes(o.metadata.name ?? '');
    // an old name may be another node's (hv-1's spare was hv-1-b's pod): only pods bound to this node
    const legacyPods = pods.items.filter(
      (p) => named(p, old) && (p.spec as { nodeName?: string } | undefined)?.nodeName === node,
    );
    return {
      pods: pods.items.filter((p) => isGatePodName(node, p.metadata.name ?? '')),
      pdb: pdbs.items.find((p) => p.metadata.name === gateName(node)),
      legacyPods,
      legacyPdbs: pdbs.items.filter((p) => p.metadata.name === old[0]),
    };
  };

  /** Drops the finalizer of each pod and deletes it, then the PDBs. True if a pod was there. */
  const remove = async (pods: readonly KubeObject[], pdbs: readonly KubeObject[] = []): Promise<boolean> => {
    for (const pod of pods) {
      await unguard(pod);
      if (!pod.metadata.deletionTimestamp)
        await deleteObject(k, podsPath(namespace), pod.metadata.name ?? '', pod.metadata.uid).catch(goneOk);
    }
    for (const pdb of pdbs)
      await deleteObject(k, pdbsPath(namespace), pdb.metadata.name ?? '', pdb.metadata.uid).catch(goneOk);
    return pods.length > 0;
  };

  /**
   * drainer is being uninstalled: the DaemonSet read at start is gone, or being deleted. One made
   * again under its name (`--cascade=orphan` then apply, `kubectl replace --force`: a new uid) is its
   * successor, not an uninstall: the gate's PDBs are owned by it from then on.
   */
  const uninstalled = async (): Promise<boolean> => {
    const had = await daemonSet().catch(() => undefined);
    if (!had) return false;
    try {
      const ds = await getDaemonSet(k, namespace, o.daemonSet);
      if (ds.metadata.deletionTimestamp !== undefined) return true;
      if (ds.metadata.uid !== had.uid) owner = Promise.resolve(ownerRef(ds, 'apps/v1', 'DaemonSet', false));
      return false;
    } catch (err) {
      if (isNotFoundError(err)) return true;
      throw err;
    }
  };

  return {
    async look(node) {
      // the DaemonSet as it is at start, so a stop can tell an uninstall (read once)
      const [ds, gate] = await Promise.all([daemonSet(), gateOf(node)]);
      const legacy = [...gate.legacyPods, ...gate.legacyPdbs];
      return {
        pdb: gate.pdb,
        pod: effectivePod(gate.pods),
        ...(legacy.length ? { legacy } : {}),
        ...(ds && gate.pdb && unowned(gate.pdb, ds) ? { unowned: true } : {}),
      };
    },
    async adopt(node) {
      // the one there now: a successor is read here (and owns what the agent makes from now on)
      if (await uninstalled()) return;
      const pdb = await absentIfMissing(getObject(k, pdbsPath(namespace), gateName(node)));
      if (pdb) await own(pdb, await daemonSet());
    },
    async hold(node) {
      // an uninstall under way: the garbage collector is taking the PDB and its pods; a gate made
      // now (a spare for a pod it deletes) would outlive the agent with its finalizer
      if (await uninstalled()) return;
      const pdb = await ensurePdb(node);
      if (pdb.metadata.deletionTimestamp) return;
      const controller = ownerRef(pdb, 'policy/v1', 'PodDisruptionBudget', true);
      const { pods, legacyPods, legacyPdbs } = await gateOf(node);
      const pod = pods.find((p) => !p.metadata.deletionTimestamp);
      if (!pod) {
        // none, or only ones being deleted (their finalizer holds drains until they go): a pod
        // under the first free name (one of the first pods.length + 1 is free)
        const taken = new Set(pods.map((p) => p.metadata.name));
        let i = 0;
        while (taken.has(gatePodName(node, i))) i++;
        await ensure(
          podsPath(namespace),
          gatePod(namespace, node, o.image, controller, gatePodName(node, i)),
        );
        return;
      }
      const name = pod.metadata.name ?? '';
      if (spent(pod)) {
        await unguard(pod);
        await deleteObject(k, podsPath(namespace), name, pod.metadata.uid).catch(goneOk);
        return;
      }
      const finalizers = pod.metadata.finalizers ?? [];
      const ownedBy = pod.metadata.ownerReferences?.find((r) => r.controller)?.uid;
      if (finalizers.includes(GATE_FINALIZER) && ownedBy === controller.uid) {
        // an upgrade: the older version's gate goes once this one holds, never before
        const legacy = [...legacyPods, ...legacyPdbs];
        if (legacy.length && seeHeld(node, { pdb, pod }).held) {
          const objects = legacy.map((x) => x.metadata.name);
          log.info({ node, objects }, 'removing the drain gate an older drainer made');
          await remove(legacyPods, legacyPdbs);
        }
        return;
      }
      // an older agent's pod, or one whose PDB was made again: guarded and owned by this PDB
      await patchMeta(k, podsPath(namespace), name, {
        resourceVersion: pod.metadata.resourceVersion,
        finalizers: [...finalizers.filter((f) => f !== GATE_FINALIZER), GATE_FINALIZER],
        ownerReferences: [controller],
      });
    },
    uninstalled,
    async successorExpected(node) {
      const ds = await absentIfMissing(getDaemonSet(k, namespace, o.daemonSet));
      // no DaemonSet at all: agents run some other way (run-once, a process per node), and one may come
      // back; an uninstall (the DaemonSet going) takes its gates with it
      if (!ds) return true;
      if (ds.metadata.deletionTimestamp) return false;
      const labels = (await getNode(k, node)).metadata.labels ?? {};
      return placesOn(placementOf(ds), labels);
    },
    async drop(node) {
      const { pods, pdb, legacyPods, legacyPdbs } = await gateOf(node);
      await remove([...pods, ...legacyPods], [...(pdb ? [pdb] : []), ...legacyPdbs]);
    },
    async release(node) {
      const { pods, legacyPods, legacyPdbs } = await gateOf(node);
      return remove([...pods, ...legacyPods], legacyPdbs);
    },
  };
}

interface NodeGate {
  readonly pods: readonly KubeObject[];
  readonly pdb: KubeObject | undefined;
  readonly legacyPods: readonly KubeObject[];
  readonly legacyPdbs: readonly KubeObject[];
}
