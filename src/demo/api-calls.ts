// Reads the sandbox's request logs the way an auditor would: each Kubernetes request becomes
// (API group, resource[/subresource], verb) as RBAC sees it; OpenStack requests become the
// service and a path template. The demo's summary and the RBAC test both use this.
import { parseRoute } from '../sandbox/kube/route.ts';

export interface KubeCall {
  /** "" for the core group. */
  readonly group: string;
  /** plural, or plural/subresource (e.g. pods/eviction, nodemaintenances/status). */
  readonly resource: string;
  /** RBAC verb: get, list, watch, create, update, patch, delete, deletecollection. */
  readonly verb: string;
}

const VERBS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch' };

/** The RBAC view of one request; undefined for discovery and unknown paths. */
export function kubeCall(method: string, path: string): KubeCall | undefined {
  const url = new URL(path, 'http://x');
  const route = parseRoute(url.pathname);
  if (route.kind !== 'resource') return undefined;
  const resource = route.subresource ? `${route.plural}/${route.subresource}` : route.plural;
  const m = method.toUpperCase();
  let verb = VERBS[m];
  if (m === 'GET') {
    const watch = route.watchPath || ['true', '1'].includes(url.searchParams.get('watch') ?? '');
    verb = watch ? 'watch' : route.name ? 'get' : 'list';
  } else if (m === 'DELETE') verb = route.name ? 'delete' : 'deletecollection';
  return verb ? { group: route.group, resource, verb } : undefined;
}

const ID = /^(?:[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}|[0-9a-f]{32}|\d+)$/i;

/** "nova GET /servers/{id}" for a request to the OpenStack sandbox. */
export function openstackCall(method: string, path: string): { service: string; what: string } {
  const pathname = new URL(path, 'http://x').pathname;
  const service = pathname.startsWith('/v3')
    ? 'keystone'
    : pathname.startsWith('/placement')
      ? 'placement'
      : 'nova';
  const template = pathname
    .replace(/^\/compute(\/v2(\.1)?)?/, '')
    .replace(/^\/placement/, '')
    .split('/')
    .map((s) => (ID.test(s) ? '{id}' : s))
    .join('/');
  return { service, what: `${method.toUpperCase()} ${template || '/'}` };
}

/** Counts by key, largest first. */
export function tally<T>(items: readonly T[], key: (t: T) => string | undefined): [string, number][] {
  const counts = new Map<string, number>();
  for (const it of items) {
    const k = key(it);
    if (k !== undefined) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}
