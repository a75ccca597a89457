// Reads the zod schema's structure, so env names, coercion, error wording and the example file's
// key list all come from the one schema instead of hand-kept tables that drift.
import type * as z from './zod.ts';
import { configSchema } from './schema.ts';
import { isDuration } from './duration.ts';

export type LeafKind =
  | 'boolean'
  | 'integer'
  | 'number'
  | 'string'
  | 'enum'
  | 'duration'
  /** an integer or a percentage of nodes ("10%") */
  | 'budget'
  | 'record'
  | 'list'
  | 'unknown';

interface Def {
  type: string;
  checks?: readonly { _zod: { def: { format?: string } } }[];
  entries?: Record<string, string>;
  innerType?: z.ZodMiniType;
  in?: z.ZodMiniType;
  shape?: Record<string, z.ZodMiniType>;
}

const defOf = (s: z.ZodMiniType): Def => (s as unknown as { def: Def }).def;

/** Strips optional/default/nullable wrappers; a pipe (duration's transform) is kept as is. */
export function unwrap(s: z.ZodMiniType): z.ZodMiniType {
  let cur = s;
  for (;;) {
    const d = defOf(cur);
    if ((d.type === 'optional' || d.type === 'default' || d.type === 'nullable') && d.innerType)
      cur = d.innerType;
    else return cur;
  }
}

export function kindOf(s: z.ZodMiniType): LeafKind {
  const u = unwrap(s);
  const d = defOf(u);
  switch (d.type) {
    case 'boolean':
      return 'boolean';
    case 'number':
      return d.checks?.some((c) => c._zod.def.format?.includes('int')) ? 'integer' : 'number';
    case 'string':
      return 'string';
    case 'enum':
      return 'enum';
    case 'record':
      return 'record';
    case 'array':
      return 'list';
    case 'pipe':
      if (isDuration(u)) return 'duration';
      return d.in && defOf(d.in).type === 'union' ? 'budget' : 'unknown';
    default:
      return 'unknown';
  }
}

function shapeOf(s: z.ZodMiniType): Record<string, z.ZodMiniType> | undefined {
  const d = defOf(unwrap(s));
  return d.type === 'object' ? d.shape : undefined;
}

export interface Leaf {
  readonly path: readonly string[];
  readonly schema: z.ZodMiniType;
  readonly kind: LeafKind;
}

/** Every settable key of the config (objects are descended, records are leaves). */
export function leaves(root: z.ZodMiniType = configSchema): Leaf[] {
  const out: Leaf[] = [];
  const walk = (s: z.ZodMiniType, path: string[]) => {
    const shape = shapeOf(s);
    if (!shape) {
      out.push({ path, schema: s, kind: kindOf(s) });
      return;
    }
    for (const [k, child] of Object.entries(shape)) walk(child, [...path, k]);
  };
  walk(root, []);
  return out;
}

/** The schema at a key path, or undefined (e.g. inside a record, or an unknown key). */
export function schemaAt(
  path: readonly PropertyKey[],
  root: z.ZodMiniType = configSchema,
): z.ZodMiniType | undefined {
  let cur: z.ZodMiniType | undefined = root;
  for (const k of path) {
    const shape: Record<string, z.ZodMiniType> | undefined = cur ? shapeOf(cur) : undefined;
    cur = shape?.[String(k)];
    if (!cur) return undefined;
  }
  return cur;
}

/** Keys of the object schema at a path (empty when it is not an object). */
export function keysAt(path: readonly PropertyKey[]): string[] {
  const s = schemaAt(path);
  return Object.keys((s && shapeOf(s)) ?? {});
}

export function enumOptions(s: z.ZodMiniType): readonly string[] {
  return Object.values(defOf(unwrap(s)).entries ?? {});
}

/** Key names whose values are secrets: never printed, never put into messages. */
export const isSecretKey = (key: string): boolean => /password|secret|token/i.test(key);
