// Discovery documents (/version, /api, /apis, resource lists). Aggregated discovery is not served:
// clients that ask for it get the plain documents and fall back to per-group discovery, as they
// do against older servers.
import type { ResourceType } from './resources.ts';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export const versionInfo = () => ({
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-drainer-sandbox',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2025-01-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: 'linux/amd64',
});

export const coreVersions = (serverAddress: string) => ({
  kind: 'APIVersions',
  versions: ['v1'],
  serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
});

function groupVersions(resources: readonly ResourceType[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const rt of resources) {
    if (!rt.group) continue;
    const versions = groups.get(rt.group) ?? [];
    for (const v of rt.versions) if (!versions.includes(v)) versions.push(v);
    groups.set(rt.group, versions);
  }
  return groups;
}

function apiGroup(name: string, versions: readonly string[]) {
  const vs = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
  return { kind: 'APIGroup', apiVersion: 'v1', name, versions: vs, preferredVersion: vs[0] };
}

export function apiGroupList(resources: readonly ResourceType[]) {
  const groups = [...groupVersions(resources)].map(([name, versions]) => {
    const { kind: _k, apiVersion: _a, ...g } = apiGroup(name, versions);
    return g;
  });
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

export function apiGroupDoc(resources: readonly ResourceType[], group: string) {
  const versions = groupVersions(resources).get(group);
  return versions ? apiGroup(group, versions) : undefined;
}

function resourceEntries(rt: ResourceType) {
  const main = {
    name: rt.plural,
    singularName: rt.singular,
    namespaced: rt.namespaced,
    kind: rt.kind,
    verbs: VERBS,
    ...(rt.shortNames.length ? { shortNames: rt.shortNames } : {}),
    ...(rt.categories.length ? { categories: rt.categories } : {}),
  };
  const out: object[] = [main];
  if (rt.statusSubresource) {
    out.push({
      name: `${rt.plural}/status`,
      singularName: '',
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: ['get', 'patch', 'update'],
    });
  }
  if (rt.id === 'pods') {
    out.push({
      name: 'pods/eviction',
      singularName: '',
      namespaced: true,
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
      verbs: ['create'],
    });
  }
  return out;
}

/** APIResourceList for one group/version, or undefined when nothing is served there. */
export function resourceList(resources: readonly ResourceType[], group: string, version: string) {
  const matching = resources.filter((rt) => rt.group === group && rt.versions.includes(version));
  if (matching.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources: matching.flatMap(resourceEntries),
  };
}
