// What the Cluster API and Karpenter stories share: their CRDs installed in the stack's API server
// (the sandbox serves them as it serves any CRD), and Machines as Cluster API makes them.
import type { KubeObject } from '../../src/kube/types.ts';
import { clusterApiCrds, karpenterCrds } from '../../src/sandbox/kube/capi-crds.ts';
import type { Stack } from './stack.ts';

export const CAPI = '/apis/cluster.x-k8s.io/v1beta1/namespaces/fleet';
export const MACHINES = `${CAPI}/machines`;

export async function installFleetTools(s: Pick<Stack, 'k'>): Promise<void> {
  for (const crd of [...clusterApiCrds(), ...karpenterCrds()])
    await s.k.request({
      method: 'POST',
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      body: crd,
    });
  await s.k
    .request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: 'fleet' } } })
    .catch(() => undefined);
}

/** A Machine as Cluster API makes it: its finalizer, its owner, and status.nodeRef once its node registered. */
export async function machineFor(
  s: Pick<Stack, 'k'>,
  name: string,
  node: string,
  o: { nodeDrainTimeout?: string; machineSet?: string } = {},
): Promise<void> {
  await s.k.request({
    method: 'POST',
    path: MACHINES,
    body: {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      metadata: {
        name,
        namespace: 'fleet',
        finalizers: ['machine.cluster.x-k8s.io'],
        ...(o.machineSet
          ? {
              ownerReferences: [
                {
                  apiVersion: 'cluster.x-k8s.io/v1beta1',
                  kind: 'MachineSet',
                  name: o.machineSet,
                  uid: 'ms-uid',
                },
              ],
            }
          : {}),
      },
      spec: {
        clusterName: 'hv',
        bootstrap: { dataSecretName: `${name}-bootstrap` },
        infrastructureRef: { apiVersion: 'infrastructure.example/v1', kind: 'FakeMachine', name },
        ...(o.nodeDrainTimeout ? { nodeDrainTimeout: o.nodeDrainTimeout } : {}),
      },
    },
  });
  await s.k.request({
    method: 'PATCH',
    path: `${MACHINES}/${name}/status`,
    contentType: 'application/merge-patch+json',
    body: { status: { nodeRef: { apiVersion: 'v1', kind: 'Node', name: node }, phase: 'Running' } },
  });
}

export const machine = (s: Pick<Stack, 'k'>, name: string) =>
  s.k.request<KubeObject>({ path: `${MACHINES}/${name}` }).catch(() => undefined);
