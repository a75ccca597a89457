// metav1.Time and metav1.MicroTime as kube-apiserver decodes them (Go's time.Parse with the
// layouts below): a Time takes RFC 3339 with any fraction and keeps whole seconds; a MicroTime wants
// exactly 6 fractional digits (a millisecond toISOString() is refused). Both are stored in UTC.

export const RFC3339 = '2006-01-02T15:04:05Z07:00';
export const RFC3339_MICRO = '2006-01-02T15:04:05.000000Z07:00';

const SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/;
const ZONE = /^(Z|[+-]\d{2}:\d{2})$/;

/** The parse of `v` by `layout`: the UTC instant and its fraction's digits, or Go's error text. */
type Parsed = { readonly ms: number; readonly micros: string } | { readonly error: string };

const refused = (v: string, layout: string, rest: string, elem: string): Parsed => ({
  error: `parsing time ${JSON.stringify(v)} as ${JSON.stringify(layout)}: cannot parse ${JSON.stringify(rest)} as ${JSON.stringify(elem)}`,
});

function parse(v: string, micro: boolean): Parsed {
  const layout = micro ? RFC3339_MICRO : RFC3339;
  const head = SECONDS.exec(v)?.[0];
  if (head === undefined) return refused(v, layout, v, '2006');
  let rest = v.slice(head.length);
  let digits = '';
  if (micro) {
    // exactly ".dddddd": Go reads 7 characters, and what follows must be the zone
    if (!/^\.\d{6}/.test(rest)) return refused(v, layout, rest, '.000000');
    digits = rest.slice(1, 7);
    rest = rest.slice(7);
  } else {
    const frac = /^\.\d+/.exec(rest)?.[0];
    if (frac !== undefined) {
      digits = frac.slice(1);
      rest = rest.slice(frac.length);
    }
  }
  if (!ZONE.test(rest)) return refused(v, layout, rest, 'Z07:00');
  const ms = Date.parse(`${head}${rest}`);
  if (Number.isNaN(ms))
    return { error: `parsing time ${JSON.stringify(v)}: month, day or hour out of range` };
  return { ms, micros: digits.padEnd(6, '0').slice(0, 6) };
}

const utcSeconds = (ms: number): string => new Date(ms).toISOString().slice(0, 19);

/** The stored form of a metav1.Time, or Go's error text. */
export function decodeTime(v: string): { readonly value: string } | { readonly error: string } {
  const p = parse(v, false);
  return 'error' in p ? p : { value: `${utcSeconds(p.ms)}Z` };
}

/** The stored form of a metav1.MicroTime, or Go's error text. */
export function decodeMicroTime(v: string): { readonly value: string } | { readonly error: string } {
  const p = parse(v, true);
  return 'error' in p ? p : { value: `${utcSeconds(p.ms)}.${p.micros}Z` };
}
