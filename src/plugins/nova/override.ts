// A client with some of its methods replaced and the rest its own, bound to it (a class's private
// fields are reachable only through the instance itself, never through an object made from it).
export function overriding<C extends object>(target: C, overrides: Partial<Record<PropertyKey, unknown>>): C {
  return new Proxy(target, {
    get(t, prop) {
      if (prop in overrides) return overrides[prop];
      const v: unknown = Reflect.get(t, prop, t);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
}
