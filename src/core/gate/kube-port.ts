// The gate's GateApi over src/kube: the PDB drainer-gate-<node> (owned by the agent DaemonSet, so
// uninstalling drainer garbage-collects it, and with it the pod it controls) and the gate pod.
import type { KubeClients } from '../../kube/client.ts';
import {
  createObject,
  deleteObject,
  gateName,
  gatePdb,
  gatePod,
  getDaemonSet,
  getObject,
  pdbsPath,
  podsPath,
} from '../../kube/gate.ts';
import type { KubeObject, OwnerReference } from '../../kube/types.ts';
import { DrainerError, isConflictError, isNotFoundError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { GateApi } from './api.ts';

export interface KubeGateOptions {
  readonly k: KubeClients;
  readonly namespace: string;
  readonly daemonSet: string;
  readonly image: string;
  readonly log: Logger;
  /** Waits between looks at a gate pod that is still being deleted (default 250 ms, at most 120 looks). */
  readonly pause?: (ms: number) => Promise<void>;
}

const ownerRef = (o: KubeObject, apiVersion: string, kind: string, controller: boolean): OwnerReference => ({
  apiVersion,
  kind,
  name: o.metadata.name ?? '',
  uid: o.metadata.uid ?? '',
  ...(controller ? { controller: true } : {}),
});

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A pod that no longer guards anything: evictions of a pod that is not Running skip the PDB. */
const spent = (pod: KubeObject, pdbUid: string): boolean => {
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  const owner = pod.metadata.ownerReferences?.find((r) => r.controller);
  return phase === 'Succeeded' || phase === 'Failed' || owner?.uid !== pdbUid;
};

export function kubeGateApi(o: KubeGateOptions): GateApi {
  const { k, namespace, log } = o;
  const pause = o.pause ?? sleep;
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

  return {
    async hold(node) {
      const name = gateName(node);
      const pdb = await ensure(pdbsPath(namespace), gatePdb(namespace, node, await daemonSet()));
      const controller = ownerRef(pdb, 'policy/v1', 'PodDisruptionBudget', true);
      const want = gatePod(namespace, node, o.image, controller);
      for (let look = 0; look < 120; look++) {
        const pod = await ensure(podsPath(namespace), want);
        if (!pod.metadata.deletionTimestamp && !spent(pod, controller.uid)) return;
        // an old incarnation: gone (or going) before a new one can take the name
        if (!pod.metadata.deletionTimestamp)
          await deleteObject(k, podsPath(namespace), name, pod.metadata.uid).catch((err: unknown) => {
            if (!isNotFoundError(err) && !isConflictError(err)) throw err;
          });
        await pause(250);
      }
      throw new DrainerError('API', `drain gate pod ${namespace}/${name} is still being deleted`);
    },
    async release(node) {
      try {
        await deleteObject(k, podsPath(namespace), gateName(node));
        return true;
      } catch (err) {
        if (isNotFoundError(err)) return false;
        throw err;
      }
    },
  };
}
