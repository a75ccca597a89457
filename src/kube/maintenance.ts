// NodeMaintenance access over both API groups (medik8s and the legacy kubevirt one). Writes are
// guarded: status by metadata.resourceVersion (409 → ConflictError), finalizers by a JSON patch test.
import type { Logger } from '../observability/logger.ts';
import { isNotFoundError } from '../errors.ts';
import type { KubeClients } from './client.ts';
import { guard, guardedPatch, pointerKey, type JsonPatchOp } from './guarded.ts';
import { MERGE_PATCH } from './http.ts';
import type { KubeList, NodeMaintenance, NodeMaintenanceStatus } from './types.ts';

export const NODE_MAINTENANCE_GROUPS = ['nodemaintenance.medik8s.io', 'nodemaintenance.kubevirt.io'] as const;
export type NodeMaintenanceGroup = (typeof NODE_MAINTENANCE_GROUPS)[number];
export const NODE_MAINTENANCE_VERSION = 'v1beta1';

/** Collection path of one group (also what runWatch takes). */
export const maintenancePath = (group: string): string =>
  `/apis/${group}/${NODE_MAINTENANCE_VERSION}/nodemaintenances`;

const groupOf = (nm: NodeMaintenance): string =>
  (nm.apiVersion ?? `${NODE_MAINTENANCE_GROUPS[0]}/`).split('/')[0] ?? NODE_MAINTENANCE_GROUPS[0];

const objectPath = (nm: NodeMaintenance): string =>
  `${maintenancePath(groupOf(nm))}/${encodeURIComponent(nm.metadata.name ?? '')}`;

export interface MaintenanceList {
  readonly items: NodeMaintenance[];
  /** Groups whose CRD is not installed (404 on list). */
  readonly missingGroups: string[];
}

/** Remembers which absent groups were already logged, per client set. */
const reported = new WeakMap<KubeClients, Set<string>>();

function reportMissing(k: KubeClients, group: string, log: Logger | undefined): void {
  const seen = reported.get(k) ?? new Set<string>();
  reported.set(k, seen);
  if (seen.has(group)) return;
  seen.add(group);
  log?.info({ group }, 'NodeMaintenance CRD not installed for this group: skipping it');
}

/** Lists NodeMaintenances of every installed group; each item keeps its own apiVersion. */
export async function listNodeMaintenances(
  k: KubeClients,
  opts: { log?: Logger; signal?: AbortSignal; groups?: readonly string[] } = {},
): Promise<MaintenanceList> {
  // The groups are read side by side (a reconcile waits for them), then joined in their order.
  const groups = opts.groups ?? NODE_MAINTENANCE_GROUPS;
  const lists = await Promise.all(
    groups.map(async (group) => {
      try {
        const list = await k.request<KubeList<NodeMaintenance>>({
          path: maintenancePath(group),
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        reported.get(k)?.delete(group);
        const apiVersion = `${group}/${NODE_MAINTENANCE_VERSION}`;
        return list.items.map((nm): NodeMaintenance => ({ ...nm, apiVersion, kind: 'NodeMaintenance' }));
      } catch (err) {
        if (!isNotFoundError(err)) throw err;
        reportMissing(k, group, opts.log);
        return undefined;
      }
    }),
  );
  return {
    items: lists.flatMap((l) => l ?? []),
    missingGroups: groups.filter((_, i) => lists[i] === undefined),
  };
}

export async function getNodeMaintenance(
  k: KubeClients,
  group: string,
  name: string,
): Promise<NodeMaintenance> {
  const nm = await k.request<NodeMaintenance>({
    path: `${maintenancePath(group)}/${encodeURIComponent(name)}`,
  });
  return { ...nm, apiVersion: `${group}/${NODE_MAINTENANCE_VERSION}`, kind: 'NodeMaintenance' };
}

/**
 * Merge-patches the status subresource, guarded by a resourceVersion: by default the one of `nm`
 * (the version the caller decided on); `resourceVersion: null` writes unguarded. Throws
 * ConflictError when someone wrote in between; returns the new object.
 */
export function patchNodeMaintenanceStatus(
  k: KubeClients,
  nm: NodeMaintenance,
  status: NodeMaintenanceStatus,
  opts: { resourceVersion?: string | null } = {},
): Promise<NodeMaintenance> {
  const rv = opts.resourceVersion === undefined ? nm.metadata.resourceVersion : opts.resourceVersion;
  const metadata = rv ? { resourceVersion: rv } : {};
  return k.request<NodeMaintenance>({
    method: 'PATCH',
    path: `${objectPath(nm)}/status`,
    contentType: MERGE_PATCH,
    body: { metadata, status },
  });
}

/**
 * Adds the finalizer unless present, and in the same write the given annotations (so both land
 * together or not at all). Returns true when the object changed.
 */
export function addNodeMaintenanceFinalizer(
  k: KubeClients,
  nm: NodeMaintenance,
  finalizer: string,
  annotations: Readonly<Record<string, string>> = {},
): Promise<boolean> {
  return guardedPatch<NodeMaintenance>(k, objectPath(nm), (cur) => {
    const ops: JsonPatchOp[] = [];
    const current = cur.metadata.finalizers;
    if (!current?.includes(finalizer)) {
      ops.push(guard(cur, '/metadata/finalizers', current), {
        op: 'add',
        path: '/metadata/finalizers',
        value: [...(current ?? []), finalizer],
      });
    }
    const have = cur.metadata.annotations;
    const missing = Object.entries(annotations).filter(([key, v]) => have?.[key] !== v);
    if (missing.length && !have) {
      ops.push(guard(cur, '/metadata/annotations', undefined), {
        op: 'add',
        path: '/metadata/annotations',
        value: {},
      });
    }
    for (const [key, v] of missing)
      ops.push({ op: 'add', path: `/metadata/annotations/${pointerKey(key)}`, value: v });
    return ops.length ? ops : undefined;
  });
}

/** Removes the finalizer if present (a missing object counts as done). Returns true when it changed. */
export async function removeNodeMaintenanceFinalizer(
  k: KubeClients,
  nm: NodeMaintenance,
  finalizer: string,
): Promise<boolean> {
  try {
    return await guardedPatch<NodeMaintenance>(k, objectPath(nm), (cur) => {
      const current = cur.metadata.finalizers;
      if (!current?.includes(finalizer)) return undefined;
      return [
        { op: 'test', path: '/metadata/finalizers', value: current },
        { op: 'replace', path: '/metadata/finalizers', value: current.filter((f) => f !== finalizer) },
      ];
    });
  } catch (err) {
    if (isNotFoundError(err)) return false;
    throw err;
  }
}
