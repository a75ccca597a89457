// A small structural check of objects against an openAPIV3Schema excerpt, as the API server prunes
// and validates custom resources: unknown fields, wrong types, and field paths that do not exist.
type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema;
  items?: Schema;
  nullable?: boolean;
  $ref?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
};
export type Excerpt = Record<string, Schema | string>;

const resolve = (doc: Excerpt, s: Schema): Schema =>
  s.$ref ? (doc[s.$ref.replace(/^#\//, '')] as Schema) : s;

const typeOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;

/** Every problem of `value` under `schema`, as "path: what". */
export function problems(doc: Excerpt, schema: Schema, value: unknown, path = ''): string[] {
  const s = resolve(doc, schema);
  if (value === null) return s.nullable ? [] : [`${path}: null`];
  if (s['x-kubernetes-int-or-string'])
    return ['string', 'integer'].includes(typeOf(value)) ? [] : [`${path}: not an int or string`];
  const t = typeOf(value);
  const want = s.type;
  if (
    want &&
    !(want === t || (want === 'number' && t === 'integer') || (want === 'object' && t === 'object'))
  )
    return [`${path}: ${t}, not ${want}`];
  if (t === 'array')
    return (value as unknown[]).flatMap((v, i) =>
      s.items ? problems(doc, s.items, v, `${path}[${i}]`) : [],
    );
  if (t !== 'object' || s['x-kubernetes-preserve-unknown-fields']) return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => {
    const sub = s.properties?.[k] ?? s.additionalProperties;
    return sub ? problems(doc, sub, v, `${path}.${k}`) : [`${path}.${k}: unknown field`];
  });
}

/** The schema of a field path ("status.conditions[].reason"), or undefined when it is not there. */
export function schemaAt(doc: Excerpt, root: Schema, path: string): Schema | undefined {
  let s: Schema | undefined = resolve(doc, root);
  for (const part of path.split('.')) {
    const [name, ...arrays] = part.split('[]');
    s = s?.properties?.[name ?? ''] ?? undefined;
    for (const _ of arrays) s = s?.items;
    if (s) s = resolve(doc, s);
  }
  return s;
}
