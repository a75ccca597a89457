// The excerpt of KubeVirt's CRD schemas (kubevirt-crds.json) held against the real CRDs of a cluster: every
// field the excerpt names must exist in the served openAPIV3Schema with the same type. The real CRDs are read
// from the cluster and never stored; only the verdict is kept (REAL.md, by the real suite's KubeVirt case).
//   node test/contract/crd-contract.ts [--kubeconfig <file>]     (kubectl on PATH, or KUBECTL)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Excerpt } from './schema-check.ts';

type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  $ref?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
};

/** The kinds the excerpt describes, and the CRD each is served by. */
export const CRD_OF: Record<string, string> = {
  VirtualMachineInstance: 'virtualmachineinstances.kubevirt.io',
  VirtualMachineInstanceMigration: 'virtualmachineinstancemigrations.kubevirt.io',
};

export interface Finding {
  kind: string;
  path: string;
  /** missing: not in the real schema; untyped: only kept by x-kubernetes-preserve-unknown-fields; type: differs. */
  problem: 'missing' | 'untyped' | 'type';
  detail?: string;
}

const resolve = (doc: Excerpt, s: Schema): Schema =>
  s.$ref ? (doc[s.$ref.replace(/^#\//, '')] as Schema) : s;

const typeName = (s: Schema): string | undefined =>
  s['x-kubernetes-int-or-string'] ? 'int-or-string' : s.type;

/** Every field path the excerpt names under `root` ("status.conditions[].reason"), with its schema. */
function* fields(doc: Excerpt, root: Schema, prefix = ''): Generator<[string, Schema]> {
  const s = resolve(doc, root);
  for (const [name, sub0] of Object.entries(s.properties ?? {})) {
    let sub = resolve(doc, sub0);
    let path = prefix ? `${prefix}.${name}` : name;
    yield [path, sub];
    while (sub.type === 'array' && sub.items) {
      sub = resolve(doc, sub.items);
      path += '[]';
      if (sub.properties) yield* fields(doc, sub, path);
    }
    if (sub.properties) yield* fields(doc, sub, path);
  }
}

/** The real schema at `path`, or why it is not there. */
function lookup(real: Schema, path: string): Schema | 'missing' | 'untyped' {
  let s: Schema = real;
  for (const part of path.split('.')) {
    const [name, ...arrays] = part.split('[]');
    const next = s.properties?.[name!];
    if (!next) {
      const additional = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
      if (additional) s = additional;
      else return s['x-kubernetes-preserve-unknown-fields'] ? 'untyped' : 'missing';
    } else s = next;
    for (const _ of arrays) {
      if (!s.items) return 'missing';
      s = s.items;
    }
  }
  return s;
}

/** Compares the excerpt with the real openAPIV3Schema of each kind: what is missing, untyped or typed otherwise. */
export function compare(excerpt: Excerpt, realSchemas: Record<string, Schema>): Finding[] {
  const out: Finding[] = [];
  for (const kind of Object.keys(CRD_OF)) {
    const real = realSchemas[kind];
    for (const [path, want] of fields(excerpt, excerpt[kind] as Schema)) {
      if (!real) {
        out.push({ kind, path, problem: 'missing', detail: `no CRD ${CRD_OF[kind]}` });
        break;
      }
      const got = lookup(real, path);
      if (got === 'missing' || got === 'untyped') out.push({ kind, path, problem: got });
      else if (typeName(want) && typeName(got) && typeName(want) !== typeName(got))
        out.push({ kind, path, problem: 'type', detail: `${typeName(got)}, excerpt ${typeName(want)}` });
    }
  }
  return out;
}

/** How many fields the excerpt names (the verdict says of how many). */
export const fieldCount = (excerpt: Excerpt): number =>
  Object.keys(CRD_OF).reduce((n, kind) => n + [...fields(excerpt, excerpt[kind] as Schema)].length, 0);

/** The served schema of each kind (the storage version's), read with kubectl. */
export function readRealSchemas(kubectl: string, kubeconfig?: string): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const [kind, crd] of Object.entries(CRD_OF)) {
    const args = [...(kubeconfig ? ['--kubeconfig', kubeconfig] : []), 'get', 'crd', crd, '-o', 'json'];
    const obj = JSON.parse(execFileSync(kubectl, args, { encoding: 'utf8' })) as {
      spec: { versions: { name: string; storage: boolean; schema?: { openAPIV3Schema: Schema } }[] };
    };
    const v = obj.spec.versions.find((x) => x.storage) ?? obj.spec.versions[0];
    if (v?.schema) out[kind] = v.schema.openAPIV3Schema;
  }
  return out;
}

export function loadExcerpt(): Excerpt {
  return JSON.parse(readFileSync(new URL('./kubevirt-crds.json', import.meta.url), 'utf8')) as Excerpt;
}

/** One line per finding, and the verdict. */
export function verdict(excerpt: Excerpt, findings: readonly Finding[]): string {
  const n = fieldCount(excerpt);
  if (findings.length === 0)
    return `all ${n} fields of test/contract/kubevirt-crds.json are in the real CRDs`;
  const missing = findings.filter((f) => f.problem !== 'untyped').length;
  return `${findings.length} of ${n} fields differ (${missing} missing or typed otherwise): ${findings
    .map((f) => `${f.kind} ${f.path} ${f.problem}${f.detail ? ` (${f.detail})` : ''}`)
    .join('; ')}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--kubeconfig');
  const kubeconfig = i > 0 ? process.argv[i + 1] : undefined;
  const excerpt = loadExcerpt();
  const findings = compare(excerpt, readRealSchemas(process.env.KUBECTL ?? 'kubectl', kubeconfig));
  console.log(verdict(excerpt, findings));
  process.exit(findings.some((f) => f.problem !== 'untyped') ? 1 : 0);
}
