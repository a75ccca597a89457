// Turns an API path into what it addresses: a discovery document or a resource (collection,
// object, subresource), the way the real server lays its paths out.

export type Route =
  | { kind: 'coreVersions' }
  | { kind: 'groupList' }
  | { kind: 'group'; group: string }
  | { kind: 'resourceList'; group: string; version: string }
  | {
      kind: 'resource';
      group: string;
      version: string;
      plural: string;
      namespace?: string;
      name?: string;
      subresource?: string;
      /** The deprecated /watch/ path prefix. */
      watchPath: boolean;
    }
  | { kind: 'unknown' };

export function parseRoute(pathname: string): Route {
  const segs = pathname
    .split('/')
    .filter((s) => s.length > 0)
    .map(decodeURIComponent);
  let group: string;
  let version: string | undefined;
  let rest: string[];
  if (segs[0] === 'api') {
    if (segs.length === 1) return { kind: 'coreVersions' };
    group = '';
    version = segs[1];
    rest = segs.slice(2);
  } else if (segs[0] === 'apis') {
    if (segs.length === 1) return { kind: 'groupList' };
    if (segs.length === 2) return { kind: 'group', group: segs[1] as string };
    group = segs[1] as string;
    version = segs[2];
    rest = segs.slice(3);
  } else return { kind: 'unknown' };
  if (!version) return { kind: 'unknown' };
  if (rest.length === 0) return { kind: 'resourceList', group, version };
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  // namespaces/{ns}/{plural}/… addresses namespaced resources; namespaces/{name}/status|finalize does not.
  const nsSub = group === '' && rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize');
  if (rest[0] === 'namespaces' && rest.length >= 3 && !nsSub) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, subresource, ...extra] = rest;
  if (!plural || extra.length > 0) return { kind: 'unknown' };
  return { kind: 'resource', group, version, plural, namespace, name, subresource, watchPath };
}
