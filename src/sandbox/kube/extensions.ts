// What the sandbox API server lends to the simulated controllers: validating admission on create
// (a webhook's place) and aggregated API groups (an APIService's place, as virt-api serves
// subresources.kubevirt.io). Both are registered while a controller runs.
import type { KubeObject, Status } from './types.ts';

/** Runs before an HTTP create of `resource` (its id); a returned Status refuses it. */
export type CreateHook = (resource: string, obj: KubeObject) => Status | undefined;

export interface ApiAnswer {
  code: number;
  body: unknown;
}

/** One group/version served by someone else than the store. */
export interface ApiExtension {
  readonly group: string;
  readonly version: string;
  /** The APIResourceList entries (what discovery shows). */
  resources(): object[];
  /** Answers a request below /apis/<group>/<version>/ (the path segments after it), or undefined: 404. */
  handle(method: string, segments: readonly string[], body: unknown): ApiAnswer | undefined;
}

/** The discovery documents and answers of the registered extensions, for a path. */
export function serveExtension(
  extensions: readonly ApiExtension[],
  method: string,
  segments: readonly string[],
  body: unknown,
): ApiAnswer | undefined {
  if (segments[0] !== 'apis' || segments.length < 2) return undefined;
  const [, group, version, ...rest] = segments;
  const mine = extensions.filter((e) => e.group === group);
  if (mine.length === 0) return undefined;
  const versions = mine.map((e) => ({ groupVersion: `${e.group}/${e.version}`, version: e.version }));
  if (version === undefined)
    return {
      code: 200,
      body: { kind: 'APIGroup', apiVersion: 'v1', name: group, versions, preferredVersion: versions[0] },
    };
  const ext = mine.find((e) => e.version === version);
  if (!ext) return undefined;
  if (rest.length === 0)
    return {
      code: 200,
      body: {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: `${ext.group}/${ext.version}`,
        resources: ext.resources(),
      },
    };
  return ext.handle(method, rest, body);
}

/** The groups to add to /apis. */
export const extensionGroups = (extensions: readonly ApiExtension[]) => {
  const byGroup = new Map<string, string[]>();
  for (const e of extensions) byGroup.set(e.group, [...(byGroup.get(e.group) ?? []), e.version]);
  return [...byGroup].map(([name, vs]) => {
    const versions = vs.map((version) => ({ groupVersion: `${name}/${version}`, version }));
    return { name, versions, preferredVersion: versions[0] };
  });
};
