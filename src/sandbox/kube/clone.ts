// Deep copy of plain JSON values: several times faster than structuredClone for API objects,
// which matters when a benchmark creates 50,000 pods.
export function clone<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(clone) as T;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== undefined) out[k] = clone(x);
  }
  return out as T;
}
