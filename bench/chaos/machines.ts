// The soak's Cluster API side: one Machine per hypervisor node (cluster.x-k8s.io/v1beta1, its CRDs
// installed as Cluster API installs them), so the agents hold their pre-drain hook on it. A Cluster
// API drain cycle deletes the node's Machine (its finalizer keeps it while the Machine controller
// works), waits on every pre-drain hook, drains, and at the end drops the finalizer and makes the
// Machine of the node that registers again under the name.
import type { KubeClients } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { clusterApiCrds } from '../../src/sandbox/kube/capi-crds.ts';
import { PRE_DRAIN_HOOK_PREFIX } from './takers.ts';

const NS = 'fleet';
const MACHINES = `/apis/cluster.x-k8s.io/v1beta1/namespaces/${NS}/machines`;
const FINALIZER = 'machine.cluster.x-k8s.io';
const MERGE = 'application/merge-patch+json';

export class Machines {
  readonly #k: KubeClients;
  /** The current Machine of each node. */
  readonly #names = new Map<string, string>();
  #made = 0;

  constructor(k: KubeClients) {
    this.#k = k;
  }

  async install(nodes: readonly string[]): Promise<void> {
    for (const crd of clusterApiCrds())
      await this.#k.request({
        method: 'POST',
        path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
        body: crd,
      });
    await this.#k.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NS } } });
    for (const node of nodes) await this.make(node);
  }

  /** A Machine for the node, as Cluster API makes one, with status.nodeRef once the node is there. */
  async make(node: string): Promise<void> {
    const name = `${node}-m${++this.#made}`;
    await this.#k.request({
      method: 'POST',
      path: MACHINES,
      body: {
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'Machine',
        metadata: { name, namespace: NS, finalizers: [FINALIZER] },
        spec: {
          clusterName: 'hypervisors',
          bootstrap: { dataSecretName: `${name}-bootstrap` },
          infrastructureRef: { apiVersion: 'infrastructure.example/v1', kind: 'FakeMachine', name },
        },
      },
    });
    await this.#k.request({
      method: 'PATCH',
      path: `${MACHINES}/${name}/status`,
      contentType: MERGE,
      body: { status: { nodeRef: { apiVersion: 'v1', kind: 'Node', name: node }, phase: 'Running' } },
    });
    this.#names.set(node, name);
  }

  /** The annotations of the node's Machine now ({} when it has none). */
  async annotations(node: string): Promise<Record<string, string>> {
    const name = this.#names.get(node);
    if (!name) return {};
    const m = await this.#k.request<KubeObject>({ path: `${MACHINES}/${name}` });
    return m.metadata.annotations ?? {};
  }

  /** Is a pre-drain hook on the node's Machine now? */
  async hooked(node: string): Promise<boolean> {
    const a = await this.annotations(node).catch(() => ({}));
    return Object.keys(a).some((k) => k.startsWith(PRE_DRAIN_HOOK_PREFIX));
  }

  /** `kubectl delete machine`: the deletionTimestamp is set, the finalizer keeps it. */
  async delete(node: string): Promise<void> {
    const name = this.#names.get(node);
    if (name) await this.#k.request({ method: 'DELETE', path: `${MACHINES}/${name}` });
  }

  /** The Machine controller is done with it: the finalizer goes, and so does the Machine. */
  async finish(node: string): Promise<void> {
    const name = this.#names.get(node);
    if (!name) return;
    this.#names.delete(node);
    await this.#k.request({
      method: 'PATCH',
      path: `${MACHINES}/${name}`,
      contentType: MERGE,
      body: { metadata: { finalizers: null } },
    });
  }
}
