// RBAC as the API server applies it to the sandbox's request log: each request becomes (group,
// resource[/subresource], verb, namespace) and is allowed when some rule of the ClusterRoles, or of
// the Roles in its namespace, names all of them. Shared by the agent's role test and the read-only one.
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { kubeCall, type KubeCall } from '../../src/demo/api-calls.ts';

export interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  /** A Role's rules hold only in its namespace (a ClusterRole's: everywhere). */
  namespace?: string;
}

interface RbacObject {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
}

const withNamespace = (o: RbacObject): Rule[] => {
  const ns = o.kind === 'Role' ? o.metadata.namespace : undefined;
  return (o.rules ?? []).map((r) => (ns ? { ...r, namespace: ns } : r));
};

/** The rules of every ClusterRole and Role in a file under daemonset/ (a file may hold a binding too). */
export const rulesOf = (file: string): Rule[] =>
  (yaml.loadAll(readFileSync(`daemonset/${file}`, 'utf8')) as RbacObject[])
    .filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')
    .flatMap(withNamespace);

/** The namespace a request path names (/api/v1/namespaces/<ns>/…), if any. */
const namespaceOf = (path: string): string | undefined =>
  /\/namespaces\/([^/?]+)\/[^/?]+/.exec(new URL(path, 'http://x').pathname)?.[1];

export type Call = KubeCall & { namespace?: string };

/** The RBAC view of one request; undefined for discovery (allowed to every user). */
export const callOf = (method: string, path: string): Call | undefined => {
  const c = kubeCall(method, path);
  const ns = namespaceOf(path);
  return c && ns ? { ...c, namespace: ns } : c;
};

export const allows = (rules: readonly Rule[], c: Call): boolean =>
  rules.some(
    (r) =>
      (r.namespace === undefined || r.namespace === c.namespace) &&
      r.apiGroups.includes(c.group) &&
      r.resources.includes(c.resource) &&
      r.verbs.includes(c.verb),
  );

export const key = (c: KubeCall) => `${c.verb} ${c.group || 'core'}/${c.resource}`;

/** Every (verb, group/resource) the rules grant, as `key` spells it. */
export const granted = (rules: readonly Rule[]): string[] =>
  rules.flatMap((r) =>
    r.apiGroups.flatMap((group) =>
      r.resources.flatMap((resource) => r.verbs.map((verb) => key({ group, resource, verb }))),
    ),
  );
