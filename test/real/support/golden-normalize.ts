// Volatile values of a recorded answer replaced by the placeholders ../shared/kube-golden uses, so that a
// recording compares by shape: <uid>, <rv>, <time>, <microtime>, <managedFields>.
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const MICROTIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

export function normalize<T>(value: T): T {
  const walk = (v: unknown, key?: string): unknown => {
    if (key === 'managedFields') return '<managedFields>';
    if (typeof v === 'string') {
      if (key === 'uid') return '<uid>';
      if (key === 'resourceVersion' && v !== '') return '<rv>';
      if (TIME.test(v)) return '<time>';
      if (MICROTIME.test(v)) return '<microtime>';
      return v;
    }
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  return walk(value) as T;
}
