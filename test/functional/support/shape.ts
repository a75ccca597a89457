// Response shapes for the contract test: field names and JSON types, not values.
export type Shape = string | { [key: string]: Shape } | Shape[];

/** The shape of a JSON value; an array's shape merges all its elements (keys union). */
export function shapeOf(v: unknown): Shape {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return v.length === 0 ? [] : [v.map(shapeOf).reduce(merge)];
  if (typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => [k, shapeOf(x)]),
    );
  }
  return typeof v;
}

function merge(a: Shape, b: Shape): Shape {
  if (a === 'null') return b;
  if (b === 'null') return a;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length === 0) return b;
    if (b.length === 0) return a;
    return [merge(a[0]!, b[0]!)];
  }
  if (typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const out: Record<string, Shape> = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = k in out ? merge(out[k]!, v) : v;
    return out;
  }
  return a === b ? a : `${kind(a)}|${kind(b)}`;
}

/**
 * Differences between the real API's shape and the emulation's, as readable lines.
 * Rules: the same field names at every level (missing and invented fields both count); the same
 * JSON type, where null on either side matches anything (nullable fields) and an empty array
 * matches any array.
 */
export function shapeDiff(real: Shape, emulated: Shape, path = '$'): string[] {
  if (real === 'null' || emulated === 'null') return [];
  if (Array.isArray(real) || Array.isArray(emulated)) {
    if (!Array.isArray(real) || !Array.isArray(emulated))
      return [`${path}: ${kind(real)} vs ${kind(emulated)}`];
    if (real.length === 0 || emulated.length === 0) return [];
    return shapeDiff(real[0]!, emulated[0]!, `${path}[]`);
  }
  if (typeof real === 'string' || typeof emulated === 'string') {
    return real === emulated ? [] : [`${path}: ${kind(real)} vs ${kind(emulated)}`];
  }
  const out: string[] = [];
  for (const k of Object.keys(real)) {
    if (!(k in emulated)) out.push(`${path}.${k}: missing in the emulation`);
    else out.push(...shapeDiff(real[k]!, emulated[k]!, `${path}.${k}`));
  }
  for (const k of Object.keys(emulated)) if (!(k in real)) out.push(`${path}.${k}: not in the real API`);
  return out;
}

function kind(s: Shape): string {
  if (Array.isArray(s)) return 'array';
  return typeof s === 'string' ? s : 'object';
}
