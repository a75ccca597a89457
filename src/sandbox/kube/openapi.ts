// Just enough OpenAPI v3 for kubectl: the root index of group/versions and, per group/version,
// each resource's PATCH operation tagged with its GVK and the `fieldValidation` parameter. From
// that kubectl concludes the server validates fields itself (it sends fieldValidation=Strict) and
// skips client-side schema validation; with no schemas it computes apply patches from its own
// types (built-ins) or as JSON merge patches (custom resources), as against a real server.
import { createHash } from 'node:crypto';
import type { ResourceType } from './resources.ts';

const gvPath = (group: string, version: string): string =>
  group ? `apis/${group}/${version}` : `api/${version}`;

function groupVersions(resources: readonly ResourceType[]): { group: string; version: string }[] {
  const seen = new Map<string, { group: string; version: string }>();
  for (const rt of resources) {
    for (const version of rt.versions) seen.set(gvPath(rt.group, version), { group: rt.group, version });
  }
  return [...seen.values()];
}

function gvDocument(resources: readonly ResourceType[], group: string, version: string) {
  const paths: Record<string, unknown> = {};
  for (const rt of resources) {
    if (rt.group !== group || !rt.versions.includes(version)) continue;
    const ns = rt.namespaced ? 'namespaces/{namespace}/' : '';
    paths[`/${gvPath(group, version)}/${ns}${rt.plural}/{name}`] = {
      patch: {
        operationId: `patch${rt.kind}`,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group, version, kind: rt.kind },
        parameters: [
          { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'force', in: 'query', schema: { type: 'boolean', uniqueItems: true } },
        ],
        responses: { '200': { description: 'OK' } },
      },
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.0' },
    paths,
    components: { schemas: {} },
  };
}

/** The document at `path` (/openapi/v3 or /openapi/v3/<gv>), or undefined for 404 (v2 included). */
export function openApiDocument(resources: readonly ResourceType[], path: string): unknown {
  const gvs = groupVersions(resources);
  if (path === '/openapi/v3') {
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const { group, version } of gvs) {
      const doc = JSON.stringify(gvDocument(resources, group, version));
      const hash = createHash('sha256').update(doc).digest('hex').slice(0, 32).toUpperCase();
      paths[gvPath(group, version)] = {
        serverRelativeURL: `/openapi/v3/${gvPath(group, version)}?hash=${hash}`,
      };
    }
    return { paths };
  }
  const gv = gvs.find((g) => path === `/openapi/v3/${gvPath(g.group, g.version)}`);
  return gv ? gvDocument(resources, gv.group, gv.version) : undefined;
}
