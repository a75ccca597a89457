// Validation of a custom resource against its CRD's openAPIV3Schema, as the apiextensions server
// does before storing: required fields, types, enums and patterns, each failure a cause of a 422.
// Fields the schema does not declare are pruned first, as the server does for a structural schema
// (unless x-kubernetes-preserve-unknown-fields); metadata is the server's own business.
import { invalid } from './status.ts';
import type { KubeObject, StatusCause } from './types.ts';

export interface Schema {
  type?: string;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  enum?: unknown[];
  pattern?: string;
  nullable?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

/** `v` without the fields `s` does not declare (a new value; the input is never changed). */
function prune(s: Schema, v: unknown, root = false): unknown {
  if (Array.isArray(v)) return s.items ? v.map((item) => prune(s.items as Schema, item)) : v;
  if (v === null || typeof v !== 'object') return v;
  if (s['x-kubernetes-preserve-unknown-fields'] && !s.properties) return v;
  const extra = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
  const out: Record<string, unknown> = {};
  for (const [k, child] of Object.entries(v)) {
    if (root && (k === 'metadata' || k === 'apiVersion' || k === 'kind')) out[k] = child;
    else if (s.properties?.[k]) out[k] = prune(s.properties[k], child);
    else if (extra) out[k] = prune(extra, child);
    else if (s['x-kubernetes-preserve-unknown-fields'] || s.additionalProperties === true) out[k] = child;
  }
  return out;
}

const typeOf = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'array'
      : typeof v === 'number' && Number.isInteger(v)
        ? 'integer'
        : typeof v;

function typeFits(want: string, v: unknown): boolean {
  const got = typeOf(v);
  return got === want || (want === 'number' && got === 'integer');
}

function check(s: Schema, v: unknown, field: string, out: StatusCause[]): void {
  if (v === null && s.nullable) return;
  if (s['x-kubernetes-int-or-string']) {
    if (typeof v !== 'string' && typeOf(v) !== 'integer')
      out.push({
        reason: 'FieldValueInvalid',
        field,
        message: `Invalid value: "${typeOf(v)}": ${field} in body must be of type integer-or-string`,
      });
    return;
  }
  if (s.type && !typeFits(s.type, v)) {
    out.push({
      reason: 'FieldValueInvalid',
      field,
      message: `Invalid value: "${typeOf(v)}": ${field} in body must be of type ${s.type}: "${typeOf(v)}"`,
    });
    return;
  }
  if (s.enum && !s.enum.some((e) => e === v)) {
    out.push({
      reason: 'FieldValueNotSupported',
      field,
      message: `Unsupported value: ${JSON.stringify(v)}: supported values: ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`,
    });
  }
  if (s.pattern && typeof v === 'string' && !new RegExp(s.pattern, 'u').test(v)) {
    out.push({
      reason: 'FieldValueInvalid',
      field,
      message: `Invalid value: ${JSON.stringify(v)}: ${field} in body should match '${s.pattern}'`,
    });
  }
  if (Array.isArray(v) && s.items)
    v.forEach((item, i) => check(s.items as Schema, item, `${field}[${i}]`, out));
  if (typeOf(v) === 'object') validateObject(s, v as Record<string, unknown>, field, out);
}

function validateObject(s: Schema, o: Record<string, unknown>, prefix: string, out: StatusCause[]): void {
  const at = (k: string) => (prefix ? `${prefix}.${k}` : k);
  for (const k of s.required ?? []) {
    if (o[k] === undefined)
      out.push({ reason: 'FieldValueRequired', field: at(k), message: 'Required value' });
  }
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined || (!prefix && k === 'metadata')) continue;
    const sub =
      s.properties?.[k] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (sub) check(sub, v, at(k), out);
  }
}

/** The causes of a 422 for `obj` under `schema` (empty when it conforms). */
export function schemaViolations(schema: Schema, obj: Record<string, unknown>): StatusCause[] {
  const out: StatusCause[] = [];
  validateObject(schema, obj, '', out);
  return out;
}

/**
 * `obj` pruned to its resource's schema, or the 422 Invalid the apiextensions server answers when
 * it breaks the schema. Kinds without a schema pass unchanged.
 */
export function conformToSchema(
  rt: { schema?: Schema; kind: string; group: string },
  obj: KubeObject,
): KubeObject {
  if (!rt.schema) return obj;
  const pruned = prune(rt.schema, obj, true) as KubeObject;
  const causes = schemaViolations(rt.schema, pruned);
  if (causes.length) throw invalid(rt.kind, obj.metadata.name ?? '', causes, rt.group);
  return pruned;
}
