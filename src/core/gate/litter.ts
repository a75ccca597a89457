// The gate objects (PDB, pod) of deleted nodes. A node that is powered off and deleted never
// stops its agent, so nobody drops its gate; the agents sweep instead, one of them a period, the
// one whose turn it is (litter-turn.ts): a sweep lists every gate and reads the Node of each gate
// not its own's. A Node made again in between keeps its gate (its own agent heals it in any case).
import { DrainerError, isConflictError, isNotFoundError } from '../../errors.ts';
import type { KubeClients } from '../../kube/client.ts';
import {
  deleteObject,
  GATE_NODE_ANNOTATION,
  GATE_PREFIX,
  GATE_SELECTOR,
  pdbsPath,
  podsPath,
} from '../../kube/gate.ts';
import { getNode } from '../../kube/node.ts';
import type { KubeObject } from '../../kube/types.ts';
import { listAll } from '../../kube/watch.ts';
import type { Logger } from '../../observability/logger.ts';
import { kubeGateApi } from './kube-port.ts';
import { hasGateFinalizer } from './observe.ts';

export interface LitterOptions {
  readonly k: KubeClients;
  readonly namespace: string;
  readonly nodeName: string;
  readonly log: Logger;
  readonly signal?: AbortSignal;
}

/**
 * The node of a gate object: the annotation that names it, or (an older version's gate) the pod's
 * node or the PDB's name; undefined when the name was cut (its node name is not known).
 */
const nodeOf = (o: KubeObject): string | undefined => {
  const named = o.metadata.annotations?.[GATE_NODE_ANNOTATION];
  if (named !== undefined) return named;
  const bound = (o.spec as { nodeName?: string } | undefined)?.nodeName;
  if (bound !== undefined) return bound;
  const name = o.metadata.name ?? '';
  return name.startsWith(GATE_PREFIX) && name.length < 253 ? name.slice(GATE_PREFIX.length) : undefined;
};

const ignoreGone = (err: unknown): void => {
  if (!isNotFoundError(err) && !isConflictError(err)) throw err;
};

async function nodeExists(k: KubeClients, node: string, signal?: AbortSignal): Promise<boolean> {
  try {
    await getNode(k, node, signal);
    return true;
  } catch (err) {
    if (isNotFoundError(err)) return false;
    throw err;
  }
}

/**
 * Removes one dead node's gate: its pods (finalizer dropped), then its PDBs (only those
 * incarnations), and only once no gate pod of the node keeps our finalizer: a pod left Terminating
 * with the finalizer would block the namespace's deletion for good.
 */
async function removeGate(o: LitterOptions, pdbs: readonly KubeObject[], node: string): Promise<void> {
  // the gate API's release: every gate pod of the node (an older version's too), finalizer first
  const api = kubeGateApi({ k: o.k, namespace: o.namespace, daemonSet: '', image: '', log: o.log });
  await api.release(node);
  const { pod } = await api.look(node);
  if (pod && hasGateFinalizer(pod))
    throw new DrainerError(
      'API',
      `the gate pod ${pod.metadata.name ?? ''} of deleted node ${node} keeps its finalizer`,
    );
  for (const pdb of pdbs)
    await deleteObject(o.k, pdbsPath(o.namespace), pdb.metadata.name ?? '', pdb.metadata.uid).catch(
      ignoreGone,
    );
}

/**
 * One sweep; answers the nodes whose gates were removed. A gate that cannot be removed is left for
 * the next sweep and does not stop this one; the first such error is thrown at the end.
 */
export async function sweepGateLitter(o: LitterOptions): Promise<string[]> {
  const list = (path: string) =>
    listAll<KubeObject>(o.k, {
      path,
      query: { labelSelector: GATE_SELECTOR },
      ...(o.signal ? { signal: o.signal } : {}),
    });
  // the PDBs, and the pods too: a pod whose PDB is gone is found by its own
  const [pdbs, pods] = await Promise.all([list(pdbsPath(o.namespace)), list(podsPath(o.namespace))]);
  const gates = new Map<string, KubeObject[]>();
  for (const obj of [...pdbs.items, ...pods.items]) {
    const node = nodeOf(obj);
    if (node === undefined || node === o.nodeName) continue;
    const of = gates.get(node) ?? [];
    if (pdbs.items.includes(obj)) of.push(obj);
    gates.set(node, of);
  }
  const removed: string[] = [];
  let failed: Error | undefined;
  for (const node of [...gates.keys()].sort()) {
    if (o.signal?.aborted) break;
    const of = gates.get(node) ?? [];
    try {
      if (await nodeExists(o.k, node, o.signal)) continue;
      await removeGate(o, of, node);
      removed.push(node);
      o.log.info({ node, gate: of.map((p) => p.metadata.name) }, 'removed the drain gate of a deleted node');
    } catch (err) {
      failed ??= err instanceof Error ? err : new Error(String(err));
    }
  }
  if (failed !== undefined) throw failed;
  return removed;
}
