// The resource types the sandbox serves: built-in kinds plus whatever CustomResourceDefinitions exist.
import type { Schema } from './schema.ts';
// A resource's id is `plural` for core/v1 and `plural.group` otherwise (the store's key).

export interface ResourceType {
  readonly id: string;
  readonly group: string; // '' for the core group
  readonly version: string; // the storage version; served versions are in `versions`
  readonly versions: readonly string[];
  readonly plural: string;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly statusSubresource: boolean;
  /** Built-in kinds accept strategic merge patches; custom resources answer 415. */
  readonly builtin: boolean;
  /** Field selector paths supported besides metadata.name and metadata.namespace. */
  readonly fieldLabels: readonly string[];
  /** Columns for `as=Table` answers (kubectl get). */
  readonly columns: readonly PrinterColumn[];
  /** A custom resource's openAPIV3Schema (storage version), validated on every write. */
  readonly schema?: Schema;
}

export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'date' | 'boolean' | 'number';
  readonly jsonPath: string;
  readonly priority?: number;
}

export const resourceId = (group: string, plural: string): string => (group ? `${plural}.${group}` : plural);

export const apiVersionOf = (rt: Pick<ResourceType, 'group' | 'version'>): string =>
  rt.group ? `${rt.group}/${rt.version}` : rt.version;

interface BuiltinSpec {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  status?: boolean;
  fieldLabels?: string[];
  columns?: PrinterColumn[];
}

const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

const BUILTINS: BuiltinSpec[] = [
  {
    group: '',
    version: 'v1',
    plural: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
    shortNames: ['ns'],
    status: true,
    fieldLabels: ['status.phase'],
    columns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }, age],
  },
  {
    group: '',
    version: 'v1',
    plural: 'nodes',
    kind: 'Node',
    namespaced: false,
    shortNames: ['no'],
    status: true,
    fieldLabels: ['spec.unschedulable'],
    columns: [{ name: 'Status', type: 'string', jsonPath: '.status.conditions' }, age],
  },
  {
    group: '',
    version: 'v1',
    plural: 'pods',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    status: true,
    fieldLabels: [
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
    columns: [
      { name: 'Status', type: 'string', jsonPath: '.status.phase' },
      age,
      { name: 'Node', type: 'string', jsonPath: '.spec.nodeName', priority: 1 },
    ],
  },
  {
    group: '',
    version: 'v1',
    plural: 'events',
    kind: 'Event',
    namespaced: true,
    shortNames: ['ev'],
    fieldLabels: [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
    ],
    columns: [
      { name: 'Type', type: 'string', jsonPath: '.type' },
      { name: 'Reason', type: 'string', jsonPath: '.reason' },
      { name: 'Object', type: 'string', jsonPath: '.involvedObject.name' },
      { name: 'Message', type: 'string', jsonPath: '.message' },
    ],
  },
  // drainer's ConfigMap and Secret, which the read-only commands read as the agents' settings
  { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true, fieldLabels: ['type'] },
  { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true },
  {
    group: 'policy',
    version: 'v1',
    plural: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    namespaced: true,
    shortNames: ['pdb'],
    status: true,
    columns: [
      { name: 'Min Available', type: 'string', jsonPath: '.spec.minAvailable' },
      { name: 'Max Unavailable', type: 'string', jsonPath: '.spec.maxUnavailable' },
      { name: 'Allowed Disruptions', type: 'integer', jsonPath: '.status.disruptionsAllowed' },
      age,
    ],
  },
  {
    group: 'apps',
    version: 'v1',
    plural: 'replicasets',
    kind: 'ReplicaSet',
    namespaced: true,
    shortNames: ['rs'],
    status: true,
    fieldLabels: ['status.replicas'],
  },
  {
    group: 'apps',
    version: 'v1',
    plural: 'daemonsets',
    kind: 'DaemonSet',
    namespaced: true,
    shortNames: ['ds'],
    status: true,
  },
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    status: true,
  },
];

function fromBuiltin(b: BuiltinSpec): ResourceType {
  return {
    id: resourceId(b.group, b.plural),
    group: b.group,
    version: b.version,
    versions: [b.version],
    plural: b.plural,
    singular: b.kind.toLowerCase(),
    kind: b.kind,
    listKind: `${b.kind}List`,
    namespaced: b.namespaced,
    shortNames: b.shortNames ?? [],
    categories: [],
    statusSubresource: b.status ?? false,
    builtin: true,
    fieldLabels: b.fieldLabels ?? [],
    columns: b.columns ?? [age],
  };
}

export const builtinResources = (): ResourceType[] => BUILTINS.map(fromBuiltin);

/** The resource a CustomResourceDefinition object declares, or undefined when it is malformed. */
export function resourceFromCrd(crd: { spec?: unknown; [k: string]: unknown }): ResourceType | undefined {
  const spec = crd.spec as
    | {
        group?: string;
        scope?: string;
        names?: {
          plural?: string;
          singular?: string;
          kind?: string;
          listKind?: string;
          shortNames?: string[];
          categories?: string[];
        };
        versions?: {
          name: string;
          served?: boolean;
          storage?: boolean;
          subresources?: { status?: object };
          additionalPrinterColumns?: PrinterColumn[];
          schema?: { openAPIV3Schema?: Schema };
        }[];
      }
    | undefined;
  const names = spec?.names;
  if (!spec?.group || !names?.plural || !names.kind || !spec.versions?.length) return undefined;
  const served = spec.versions.filter((v) => v.served !== false);
  const storage = spec.versions.find((v) => v.storage) ?? served[0] ?? spec.versions[0];
  if (!storage) return undefined;
  return {
    id: resourceId(spec.group, names.plural),
    group: spec.group,
    version: storage.name,
    versions: served.map((v) => v.name),
    plural: names.plural,
    singular: names.singular ?? names.kind.toLowerCase(),
    kind: names.kind,
    listKind: names.listKind ?? `${names.kind}List`,
    namespaced: spec.scope !== 'Cluster',
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    statusSubresource: Boolean(storage.subresources?.status),
    builtin: false,
    fieldLabels: [],
    columns: [...(storage.additionalPrinterColumns ?? []), age],
    ...(storage.schema?.openAPIV3Schema ? { schema: storage.schema.openAPIV3Schema } : {}),
  };
}
