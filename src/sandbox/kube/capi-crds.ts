// The fleet tools' CustomResourceDefinitions a story installs when it plays one (the sandbox does not
// install them by default: drainer finds a cluster without them): Cluster API's Machine, MachineSet
// and MachineDeployment (cluster.x-k8s.io/v1beta1, namespaced, status subresource; a Machine needs
// clusterName, bootstrap and infrastructureRef as the real schema says) and Karpenter's NodePool
// (karpenter.sh/v1, cluster-scoped). The rest of their fields are kept as sent.
import type { KubeObject } from './types.ts';

const open = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

const machineSpec = {
  type: 'object',
  'x-kubernetes-preserve-unknown-fields': true,
  required: ['clusterName', 'bootstrap', 'infrastructureRef'],
  properties: {
    clusterName: { type: 'string', minLength: 1 },
    bootstrap: open,
    infrastructureRef: open,
    nodeDrainTimeout: { type: 'string' },
  },
};

const withSpec = (spec: object) => ({
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec,
    status: open,
  },
});

function crd(
  group: string,
  version: string,
  kind: string,
  plural: string,
  scope: 'Namespaced' | 'Cluster',
  schema: object,
  shortNames: string[],
): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope,
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List`, shortNames },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: schema },
        },
      ],
    },
  };
}

/** Cluster API's Machine, MachineSet and MachineDeployment. */
export const clusterApiCrds = (): KubeObject[] => [
  crd('cluster.x-k8s.io', 'v1beta1', 'Machine', 'machines', 'Namespaced', withSpec(machineSpec), ['ma']),
  crd('cluster.x-k8s.io', 'v1beta1', 'MachineSet', 'machinesets', 'Namespaced', withSpec(open), ['ms']),
  crd(
    'cluster.x-k8s.io',
    'v1beta1',
    'MachineDeployment',
    'machinedeployments',
    'Namespaced',
    withSpec(open),
    ['md'],
  ),
];

/** Karpenter's NodePool. */
export const karpenterCrds = (): KubeObject[] => [
  crd('karpenter.sh', 'v1', 'NodePool', 'nodepools', 'Cluster', withSpec(open), []),
];
