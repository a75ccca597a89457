// The drain gate's objects in drainer's namespace: per node a PodDisruptionBudget drainer-gate-<node>-<hash>
// (minAvailable 1: no disruption allowed; an integer needs no controller scale) and a pause pod of
// the same name, bound to the node, whose controller owner is that PDB. A controller that is not a
// DaemonSet makes `kubectl drain` treat the pod as managed: it neither skips it nor refuses it.
import { createHash } from 'node:crypto';
import type { KubeTransport } from './http.ts';
import type { KubeObject, OwnerReference } from './types.ts';

export const GATE_PREFIX = 'drainer-gate-';
export const GATE_COMPONENT = 'drain-gate';
/** The gate pod's label that names its node (the PDB selects on it). */
export const GATE_NODE_LABEL = 'drainer.dev/gate-node';
/**
 * The gate pod's finalizer while VMs remain: a drain that deletes pods (`kubectl drain
 * --disable-eviction`, `kubectl delete pod`) waits until they are gone, so it waits for this one.
 */
export const GATE_FINALIZER = 'drainer.dev/gate';
/** Karpenter's taint: a pod that tolerates it is neither evicted nor waited for by Karpenter. */
export const KARPENTER_DISRUPTED = 'karpenter.sh/disrupted';

/**
 * The taints the gate pod tolerates, by key (any value and effect): the cordon, drainer's and
 * KubeVirt's drain taints, cluster-autoscaler's, a failing node's. Never `karpenter.sh/disrupted`
 * (Karpenter skips a pod that tolerates it), so never `operator: Exists` without a key.
 */
export const GATE_TOLERATED = [
  'node.kubernetes.io/unschedulable',
  'drainer.dev/evacuating',
  'kubevirt.io/drain',
  'ToBeDeletedByClusterAutoscaler',
  'DeletionCandidateOfClusterAutoscaler',
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.kubernetes.io/memory-pressure',
  'node.kubernetes.io/disk-pressure',
  'node.kubernetes.io/pid-pressure',
  'node.kubernetes.io/network-unavailable',
  'node.kubernetes.io/out-of-service',
  'node.cloudprovider.kubernetes.io/shutdown',
] as const;

/**
 * On the Node: an operator released its gate (`drainer release`), when (ISO). Beside the record, not in
 * it: a running evacuation rewrites its record from memory and would drop a field written meanwhile.
 */
export const GATE_RELEASED_ANNOTATION = 'drainer.dev/gate-released';

/** On the gate's PDB and pods: the node's whole name (their names and labels carry a cut one). */
export const GATE_NODE_ANNOTATION = 'drainer.dev/gate-node';

/** Ten hex digits of the node name's SHA-256: two nodes' gates never share a name or a selector. */
const digest = (node: string): string => createHash('sha256').update(node).digest('hex').slice(0, 10);

/** The node name cut to n characters, ending in a letter or digit (as names and label values must). */
const cut = (node: string, n: number): string => node.slice(0, n).replace(/[^A-Za-z0-9]+$/, '');

/**
 * drainer-gate-<node>-<hash>: the node's name (cut to 227 characters) and a hash of all of it, so
 * no two nodes share a gate whatever their names (`hv-1` and `hv-1-b`, or two long names with the
 * same start); 251 characters at most, so the first spare's `-b` fits in the API server's 253.
 */
export const gateName = (node: string): string => `${GATE_PREFIX}${cut(node, 227)}-${digest(node)}`;

/** The i-th spare's suffix: b, then b2, b3 … (the first as older versions named their one spare). */
const spareSuffix = (i: number): string => (i === 1 ? 'b' : `b${i}`);

/**
 * The node's gate pod names: gateName (i = 0), then the spares, each made while every pod before it
 * is being deleted (its finalizer keeps it until the VMs have left: a drain that deleted or evicted
 * it waits on it), so the PDB guards a running pod again at once however often someone deletes
 * one. A spare is gateName-b, -b2, -b3 …, its node part cut further where 253 characters need it:
 * it always carries the node's hash, so no spare is ever another node's gate.
 */
export function gatePodName(node: string, i = 0): string {
  if (i === 0) return gateName(node);
  const suffix = spareSuffix(i);
  const room = 253 - GATE_PREFIX.length - 12 - suffix.length; // "-" hash "-" suffix
  return `${GATE_PREFIX}${cut(node, Math.min(227, room))}-${digest(node)}-${suffix}`;
}

/** Is this one of the node's gate pods (its own or a spare)? */
export function isGatePodName(node: string, name: string): boolean {
  if (name === gateName(node)) return true;
  const m = /-b(\d*)$/.exec(name);
  const n = m ? Number(m[1] || 1) : 0;
  // the name made for that spare, exactly (b1, b02 are no spare's)
  return Number.isSafeInteger(n) && n >= 1 && name === gatePodName(node, n);
}

/**
 * The names drainer gave a gate before they carried a hash (drainer-gate-<node>, and -b): an
 * upgraded agent still finds these, releases them with the gate and removes them once its own
 * gate holds; the litter sweep removes those of deleted nodes.
 */
export const legacyGateNames = (node: string): readonly [string, string] => {
  const name = `${GATE_PREFIX}${node}`.slice(0, 253);
  return [name, `${name.slice(0, 251)}-b`];
};

const ns = (namespace: string) => encodeURIComponent(namespace);
export const pdbsPath = (namespace: string): string =>
  `/apis/policy/v1/namespaces/${ns(namespace)}/poddisruptionbudgets`;
export const podsPath = (namespace: string): string => `/api/v1/namespaces/${ns(namespace)}/pods`;

/** The gate-node label's value: the node's name cut to 52 and its hash (label values are 63 at most). */
export const gateLabelValue = (node: string): string => `${cut(node, 52)}-${digest(node)}`;

/** The label value of a gate made before the hash: the name cut to 63 (shared by long names). */
export const legacyLabelValue = (node: string): string => node.slice(0, 63).replace(/[^A-Za-z0-9]+$/, '');

/** Selects the gate objects of one node (the agent's watches). */
export const gateSelector = (node: string): string => `${GATE_NODE_LABEL}=${gateLabelValue(node)}`;

/** Selects the node's gate objects, and those an older drainer made for it (and, by their label, maybe others'). */
export const gateAndLegacySelector = (node: string): string =>
  `${GATE_NODE_LABEL} in (${gateLabelValue(node)},${legacyLabelValue(node)})`;

/** Selects every node's gate objects. */
export const GATE_SELECTOR = `app.kubernetes.io/component=${GATE_COMPONENT}`;

const labels = (node: string) => ({
  'app.kubernetes.io/name': 'drainer',
  'app.kubernetes.io/component': GATE_COMPONENT,
  [GATE_NODE_LABEL]: gateLabelValue(node),
});

/** The PDB's spec: no disruption allowed (an integer needs no controller scale). */
export const gatePdbSpec = (node: string) => ({ minAvailable: 1, selector: { matchLabels: labels(node) } });

export function gatePdb(namespace: string, node: string, owner?: OwnerReference): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      name: gateName(node),
      namespace,
      labels: labels(node),
      annotations: {
        [GATE_NODE_ANNOTATION]: node,
        'drainer.dev/explain': `drainer holds drains of node ${node} until its virtual machines have moved; see drainer status`,
      },
      ...(owner ? { ownerReferences: [owner] } : {}),
    },
    spec: gatePdbSpec(node),
  };
}

export function gatePod(
  namespace: string,
  node: string,
  image: string,
  pdb: OwnerReference,
  name = gateName(node),
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: labels(node),
      annotations: { [GATE_NODE_ANNOTATION]: node },
      ownerReferences: [pdb],
      finalizers: [GATE_FINALIZER],
    },
    spec: {
      nodeName: node,
      // the gate must stay on a cordoned, tainted node: it is the last pod a drain evicts
      tolerations: GATE_TOLERATED.map((key) => ({ key, operator: 'Exists' })),
      // neither preempted nor evicted under node pressure before ordinary pods: it guards the node
      priorityClassName: 'system-node-critical',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 0,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 65535,
        runAsGroup: 65535,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: 'gate',
          image,
          imagePullPolicy: 'IfNotPresent',
          resources: {
            requests: { cpu: '1m', memory: '4Mi' },
            limits: { cpu: '10m', memory: '16Mi' },
          },
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          },
        },
      ],
    },
  };
}

export const createObject = (k: KubeTransport, path: string, body: KubeObject): Promise<KubeObject> =>
  k.request<KubeObject>({ method: 'POST', path, body });

export const getObject = (k: KubeTransport, path: string, name: string): Promise<KubeObject> =>
  k.request<KubeObject>({ path: `${path}/${encodeURIComponent(name)}` });

/** Deletes at once (the pause container has nothing to finish); with uid, only that incarnation. */
export const deleteObject = (k: KubeTransport, path: string, name: string, uid?: string): Promise<unknown> =>
  k.request({
    method: 'DELETE',
    path: `${path}/${encodeURIComponent(name)}`,
    body: {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
      ...(uid ? { preconditions: { uid } } : {}),
    },
  });

/** A merge patch of an object's metadata (finalizers, ownerReferences), guarded by its resourceVersion. */
export const patchMeta = (
  k: KubeTransport,
  path: string,
  name: string,
  metadata: Record<string, unknown>,
): Promise<KubeObject> =>
  k.request<KubeObject>({
    method: 'PATCH',
    path: `${path}/${encodeURIComponent(name)}`,
    contentType: 'application/merge-patch+json',
    body: { metadata },
  });

/** Replaces an object (a PUT carrying the read resourceVersion: 409 if it changed meanwhile). */
export const replaceObject = (k: KubeTransport, path: string, body: KubeObject): Promise<KubeObject> =>
  k.request<KubeObject>({
    method: 'PUT',
    path: `${path}/${encodeURIComponent(body.metadata.name ?? '')}`,
    body,
  });

/** The agent DaemonSet, to own the PDBs (uninstalling it garbage-collects them). */
export const getDaemonSet = (k: KubeTransport, namespace: string, name: string): Promise<KubeObject> =>
  k.request<KubeObject>({
    path: `/apis/apps/v1/namespaces/${ns(namespace)}/daemonsets/${encodeURIComponent(name)}`,
  });
