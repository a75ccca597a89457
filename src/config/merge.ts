// Deep merge of plain config layers: later layers win key by key; arrays and records are values.

export type Layer = Record<string, unknown>;

export const isPlainObject = (v: unknown): v is Layer =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** Merges `over` onto `base`. Keys listed in `atomic` (dotted paths) are replaced, not merged. */
export function mergeLayers(
  base: Layer,
  over: Layer,
  atomic: ReadonlySet<string> = new Set(),
  at = '',
): Layer {
  const out: Layer = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    const path = at ? `${at}.${k}` : k;
    const prev = out[k];
    out[k] =
      isPlainObject(prev) && isPlainObject(v) && !atomic.has(path) ? mergeLayers(prev, v, atomic, path) : v;
  }
  return out;
}

/** Sets a value at a key path, creating objects on the way. */
export function setPath(target: Layer, path: readonly string[], value: unknown): void {
  let cur = target;
  path.slice(0, -1).forEach((k) => {
    if (!isPlainObject(cur[k])) cur[k] = {};
    cur = cur[k] as Layer;
  });
  const last = path[path.length - 1];
  if (last !== undefined) cur[last] = value;
}

/** Drops undefined values so that a layer only holds what it sets. */
export function compact(layer: Layer): Layer {
  const out: Layer = {};
  for (const [k, v] of Object.entries(layer)) {
    if (v === undefined) continue;
    if (isPlainObject(v)) {
      const inner = compact(v);
      if (Object.keys(inner).length > 0) out[k] = inner;
    } else out[k] = v;
  }
  return out;
}
