// The exchanges test/real/record.ts records, in order, against one state it builds itself (namespaces
// `golden126` and `golden126-restricted`, pods bound to the real node). `after` names waits done before a step
// (the replay does the same): `running:<pod>`, `observed:<pdb>`, `gone:<pod>`.
import type { KubeObject } from '../../../src/kube/types.ts';

export const NS = 'golden126';
export const RESTRICTED_NS = 'golden126-restricted';
/** A node name that exists nowhere: a pod bound to it stays Pending. */
export const ABSENT_NODE = 'golden126-absent-node';

export interface Step {
  name: string;
  note: string;
  method: string;
  path: string;
  body?: unknown;
  contentType?: string;
  after?: string[];
  /** Bytes written as they are on one connection (the wire's facts). */
  raw?: string;
  /** A race with a controller: the recorder re-does the step before and this one until the answer says this. */
  race?: string;
}

export interface Recorded {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

const pods = `/api/v1/namespaces/${NS}/pods`;
const pdbs = `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`;

function pod(name: string, node: string, extra: Record<string, unknown> = {}): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { app: name }, ...extra },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 30,
      containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', imagePullPolicy: 'IfNotPresent' }],
    },
  };
}

const pdb = (name: string, app: string, budget: Record<string, unknown>) => ({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name, namespace: NS },
  spec: { ...budget, selector: { matchLabels: { app } } },
});

const eviction = (name: string, dryRun = false) => ({
  method: 'POST',
  path: `${pods}/${name}/eviction${dryRun ? '?dryRun=All' : ''}`,
  body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: NS } },
});

const deleteOptions = (extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'DeleteOptions',
  gracePeriodSeconds: 0,
  ...extra,
});

export function golden(node: string, gate: KubeObject): Step[] {
  const hostNetworkPod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'host-network', namespace: RESTRICTED_NS },
    spec: { hostNetwork: true, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
  };
  const rawDelete = JSON.stringify(deleteOptions());
  return [
    {
      name: 'create the namespace',
      note: '',
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    },
    {
      name: 'create a pod bound to the node',
      note: 'the kubelet starts it some seconds later: Pending until then',
      method: 'POST',
      path: pods,
      body: pod('runner', node),
    },
    {
      name: 'create a PDB that allows one disruption',
      note: 'created just before the eviction below, so the disruption controller has not yet observed it',
      method: 'POST',
      path: pdbs,
      // minAvailable 0: an integer needs no controller scale (maxUnavailable on a bare pod counts 0 expected pods)
      body: pdb('runner', 'runner', { minAvailable: 0 }),
      after: ['running:runner'],
    },
    {
      name: 'eviction while the PDB status is not yet observed',
      note: 'the eviction API refuses while status.observedGeneration is behind the generation, even where the budget would allow it',
      ...eviction('runner', true),
      race: 'is still being processed by the server',
    },
    {
      name: 'get the PDB once observed',
      note: 'the status fields the disruption controller writes',
      method: 'GET',
      path: `${pdbs}/runner`,
      after: ['observed:runner'],
    },
    {
      name: 'eviction allowed once observed (dry run)',
      note: '',
      ...eviction('runner', true),
    },
    {
      name: 'delete with a stale uid precondition',
      note: '409 Conflict: the precondition names another incarnation',
      method: 'DELETE',
      path: `${pods}/runner`,
      body: deleteOptions({ preconditions: { uid: '00000000-0000-4000-8000-000000000001' } }),
    },
    {
      name: 'delete with grace 0 and the uid precondition',
      note: 'the answer is the pod as it goes (a pod bound to a node is answered, not a Status)',
      method: 'DELETE',
      path: `${pods}/runner`,
      body: deleteOptions({ preconditions: { uid: '<uid>' } }),
    },
    {
      name: 'create a pod bound to a node that does not exist',
      note: 'no kubelet runs it: it stays Pending',
      method: 'POST',
      path: pods,
      body: pod('pending', ABSENT_NODE),
      after: ['gone:runner'],
    },
    {
      name: 'create a PDB that allows no disruption for it',
      note: '',
      method: 'POST',
      path: pdbs,
      body: pdb('pending', 'pending', { minAvailable: 1 }),
    },
    {
      name: 'eviction of a Pending pod under a PDB that allows none',
      note: '201: a pod that is not Running is evicted without any PDB check',
      ...eviction('pending'),
      after: ['observed:pending'],
    },
    {
      name: 'create a pod with a finalizer',
      note: '',
      method: 'POST',
      path: pods,
      body: pod('held', node, { finalizers: ['golden.drainer.dev/hold'] }),
    },
    {
      name: 'delete the pod with a finalizer (grace 0)',
      note: 'answered 200 with the pod: deletionTimestamp set, it stays while its finalizer does',
      method: 'DELETE',
      path: `${pods}/held`,
      body: deleteOptions(),
      after: ['running:held'],
    },
    {
      name: 'get the pod with a finalizer under deletion',
      note: 'still there, deletionTimestamp and deletionGracePeriodSeconds 0 set',
      method: 'GET',
      path: `${pods}/held`,
    },
    {
      name: 'eviction of a pod under deletion',
      note: 'a pod already terminating is evicted without a PDB check',
      ...eviction('held'),
    },
    {
      name: 'remove the finalizer',
      note: '',
      method: 'PATCH',
      path: `${pods}/held`,
      body: { metadata: { finalizers: null } },
      contentType: 'application/merge-patch+json',
    },
    {
      name: 'get the pod after its finalizer is gone',
      note: '404 once the kubelet has confirmed the stop (grace 0)',
      method: 'GET',
      path: `${pods}/held`,
      after: ['gone:held'],
    },
    {
      name: 'create a namespace that enforces Pod Security restricted',
      note: '',
      method: 'POST',
      path: '/api/v1/namespaces',
      body: {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: RESTRICTED_NS, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
      },
    },
    {
      name: "the gate pod's spec under restricted (dry run)",
      note: 'admitted: drainer creates it in a namespace that enforces restricted',
      method: 'POST',
      path: `/api/v1/namespaces/${RESTRICTED_NS}/pods?dryRun=All`,
      body: { ...gate, metadata: { ...gate.metadata, ownerReferences: undefined } },
    },
    {
      name: 'a hostNetwork pod under restricted (dry run)',
      note: '403 Forbidden naming the violated checks',
      method: 'POST',
      path: `/api/v1/namespaces/${RESTRICTED_NS}/pods?dryRun=All`,
      body: hostNetworkPod,
    },
    {
      name: 'a DELETE whose body has no Content-Length, then a GET on the same connection',
      note: 'the server reads no body for the DELETE, takes the body as the next request line and answers 400 Bad Request; the GET is never answered',
      method: 'DELETE',
      path: `${pods}/no-such-pod`,
      raw:
        `DELETE ${pods}/no-such-pod HTTP/1.1\r\nHost: golden\r\nContent-Type: application/json\r\n\r\n${rawDelete}` +
        `GET /version HTTP/1.1\r\nHost: golden\r\n\r\n`,
    },
  ];
}
