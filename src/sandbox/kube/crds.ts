// The CustomResourceDefinitions drainer works with, as apiextensions.k8s.io/v1 objects.
// The sandbox installs them by default; the deployment manifests can render the same objects.
import type { KubeObject } from './types.ts';

const preserve = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

// The medik8s node-maintenance-operator's v1beta1 fields (api/v1beta1 there). It enforces nodeName's
// immutability in a webhook and declares no enum or conditions: the schema holds neither.
const nodeMaintenanceSchema = {
  type: 'object',
  description: 'NodeMaintenance asks for a node to be cordoned and drained for maintenance.',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['nodeName'],
      properties: {
        evictionTimeout: {
          type: 'string',
          pattern: '^(0|([0-9]+(\\.[0-9]+)?(ms|s|m|h)))$',
          description: 'How long evictions may take before giving up; 0 waits forever.',
        },
        nodeName: { type: 'string', description: 'Node to put into maintenance.' },
        reason: { type: 'string', description: 'Why the node goes into maintenance.' },
      },
    },
    status: {
      type: 'object',
      properties: {
        phase: { type: 'string', description: 'Running, Succeeded or Failed.' },
        drainProgress: { type: 'integer', description: 'Percentage of the drain done.' },
        lastUpdate: { type: 'string', format: 'date-time' },
        lastError: { type: 'string' },
        pendingPods: { type: 'array', items: { type: 'string' } },
        totalpods: { type: 'integer' },
        evictionPods: { type: 'integer' },
        errorOnLeaseCount: { type: 'integer' },
      },
    },
  },
};

/** Only the medik8s group gets the short name: with both, kubectl warns that "nm" is ambiguous. */
function nodeMaintenance(group: string, shortNames: string[]): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `nodemaintenances.${group}` },
    spec: {
      group,
      scope: 'Cluster',
      names: {
        plural: 'nodemaintenances',
        singular: 'nodemaintenance',
        kind: 'NodeMaintenance',
        listKind: 'NodeMaintenanceList',
        shortNames,
      },
      versions: [
        {
          name: 'v1beta1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: nodeMaintenanceSchema },
          additionalPrinterColumns: [
            { name: 'Node', type: 'string', jsonPath: '.spec.nodeName' },
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Reason', type: 'string', jsonPath: '.spec.reason', priority: 1 },
          ],
        },
      ],
    },
  };
}

function kubevirt(
  plural: string,
  kind: string,
  shortNames: string[],
  columns: { name: string; type: string; jsonPath: string }[],
): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.kubevirt.io` },
    spec: {
      group: 'kubevirt.io',
      scope: 'Namespaced',
      names: {
        plural,
        singular: kind.toLowerCase(),
        kind,
        listKind: `${kind}List`,
        shortNames,
        categories: ['all'],
      },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: preserve },
          additionalPrinterColumns: columns,
        },
      ],
    },
  };
}

/** NodeMaintenance (medik8s and legacy kubevirt groups), KubeVirt, VMI, VM and VMIM definitions. */
export function drainerCrds(): KubeObject[] {
  return [
    nodeMaintenance('nodemaintenance.medik8s.io', ['nm']),
    nodeMaintenance('nodemaintenance.kubevirt.io', []),
    kubevirt(
      'kubevirts',
      'KubeVirt',
      ['kv', 'kvs'],
      [{ name: 'Phase', type: 'string', jsonPath: '.status.phase' }],
    ),
    kubevirt(
      'virtualmachineinstances',
      'VirtualMachineInstance',
      ['vmi', 'vmis'],
      [
        { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
        { name: 'NodeName', type: 'string', jsonPath: '.status.nodeName' },
      ],
    ),
    kubevirt(
      'virtualmachines',
      'VirtualMachine',
      ['vm', 'vms'],
      [{ name: 'Status', type: 'string', jsonPath: '.status.printableStatus' }],
    ),
    kubevirt(
      'virtualmachineinstancemigrations',
      'VirtualMachineInstanceMigration',
      ['vmim', 'vmims'],
      [
        { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
        { name: 'VMI', type: 'string', jsonPath: '.spec.vmiName' },
      ],
    ),
  ];
}
