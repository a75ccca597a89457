// Server-side printing (meta.k8s.io/v1 Table) for `kubectl get`: the columns kubectl users expect
// for nodes and pods, printer columns for custom resources, Name + Age otherwise.
import type { IncomingMessage } from 'node:http';
import type { PrinterColumn, ResourceType } from './resources.ts';
import type { KubeObject } from './types.ts';

export const wantsTable = (req: IncomingMessage): boolean => /as=Table/.test(req.headers.accept ?? '');

/** Kubernetes' short human duration ("45s", "5m12s", "3h", "12d"). */
export function humanAge(fromIso: string | undefined, nowMs = Date.now()): string {
  if (!fromIso) return '<unknown>';
  const s = Math.max(0, Math.floor((nowMs - Date.parse(fromIso)) / 1000));
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  const d = Math.floor(h / 24);
  if (s < 120) return `${s}s`;
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 180) return `${m}m`;
  if (h < 8) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  if (h < 48) return `${h}h`;
  if (h < 192) return h % 24 ? `${d}d${h % 24}h` : `${d}d`;
  if (d < 730) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

function lookup(obj: unknown, jsonPath: string): unknown {
  let cur: unknown = obj;
  for (const part of jsonPath.replace(/^\./, '').split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function cell(col: PrinterColumn, obj: KubeObject): unknown {
  const v = lookup(obj, col.jsonPath);
  if (col.type === 'date') return humanAge(typeof v === 'string' ? v : undefined);
  if (v === undefined || v === null) return col.type === 'string' ? '' : null;
  return typeof v === 'object' ? JSON.stringify(v) : v;
}

interface Column {
  name: string;
  type: string;
  priority: number;
  value: (o: KubeObject) => unknown;
}

const age: Column = {
  name: 'Age',
  type: 'string',
  priority: 0,
  value: (o) => humanAge(o.metadata.creationTimestamp),
};

function nodeStatus(o: KubeObject): string {
  const conds =
    (o.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
  const ready = conds.find((c) => c.type === 'Ready');
  const parts = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if ((o.spec as { unschedulable?: boolean } | undefined)?.unschedulable) parts.push('SchedulingDisabled');
  return parts.join(',');
}

interface PodStatus {
  phase?: string;
  podIP?: string;
  containerStatuses?: { ready?: boolean; restartCount?: number }[];
}

const podStatus = (o: KubeObject): PodStatus => o.status ?? {};

const NODE_COLUMNS: Column[] = [
  { name: 'Status', type: 'string', priority: 0, value: nodeStatus },
  {
    name: 'Roles',
    type: 'string',
    priority: 0,
    value: (o) =>
      Object.keys(o.metadata.labels ?? {})
        .filter((l) => l.startsWith('node-role.kubernetes.io/'))
        .map((l) => l.slice('node-role.kubernetes.io/'.length))
        .join(',') || '<none>',
  },
  age,
  {
    name: 'Version',
    type: 'string',
    priority: 0,
    value: (o) =>
      (o.status as { nodeInfo?: { kubeletVersion?: string } } | undefined)?.nodeInfo?.kubeletVersion ?? '',
  },
];

const POD_COLUMNS: Column[] = [
  {
    name: 'Ready',
    type: 'string',
    priority: 0,
    value: (o) => {
      const containers = ((o.spec as { containers?: unknown[] } | undefined)?.containers ?? []).length;
      const ready = (podStatus(o).containerStatuses ?? []).filter((c) => c.ready).length;
      return `${ready}/${containers}`;
    },
  },
  {
    name: 'Status',
    type: 'string',
    priority: 0,
    value: (o) => (o.metadata.deletionTimestamp ? 'Terminating' : (podStatus(o).phase ?? 'Unknown')),
  },
  {
    name: 'Restarts',
    type: 'string',
    priority: 0,
    value: (o) =>
      String((podStatus(o).containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0)),
  },
  age,
  { name: 'IP', type: 'string', priority: 1, value: (o) => podStatus(o).podIP ?? '<none>' },
  {
    name: 'Node',
    type: 'string',
    priority: 1,
    value: (o) => (o.spec as { nodeName?: string } | undefined)?.nodeName ?? '<none>',
  },
];

function columnsFor(rt: ResourceType): Column[] {
  if (rt.id === 'nodes') return NODE_COLUMNS;
  if (rt.id === 'pods') return POD_COLUMNS;
  return rt.columns.map((c) => ({
    name: c.name,
    type: c.type === 'date' ? 'string' : c.type,
    priority: c.priority ?? 0,
    value: (o: KubeObject) => cell(c, o),
  }));
}

export function toTable(
  rt: ResourceType,
  items: readonly KubeObject[],
  metadata: Record<string, unknown>,
  includeObject: string | null,
) {
  const cols = columnsFor(rt);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: [
      { name: 'Name', type: 'string', format: 'name', description: 'Name of the object', priority: 0 },
      ...cols.map((c) => ({
        name: c.name,
        type: c.type,
        format: '',
        description: c.name,
        priority: c.priority,
      })),
    ],
    rows: items.map((o) => ({
      cells: [o.metadata.name, ...cols.map((c) => c.value(o))],
      object:
        includeObject === 'None'
          ? undefined
          : includeObject === 'Object'
            ? o
            : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
    })),
  };
}
