// Label and field selectors in the query-string syntax of the real API server.
import { badRequest } from './status.ts';
import type { KubeObject } from './types.ts';

type Requirement =
  | { key: string; op: 'in' | 'notin'; values: readonly string[] }
  | { key: string; op: 'exists' | '!exists' }
  | { key: string; op: 'gt' | 'lt'; value: bigint };

const INT64 = /^[+-]?\d+$/;
const inInt64 = (n: bigint): boolean => n >= -(2n ** 63n) && n < 2n ** 63n;

/** A label value as the API server's Gt and Lt read it: an int64, or nothing (never matches). */
function int64(v: string | undefined): bigint | undefined {
  if (v === undefined || !INT64.test(v)) return undefined;
  const n = BigInt(v);
  return inInt64(n) ? n : undefined;
}

export type Matcher = (labels: Record<string, string> | undefined) => boolean;

/** Splits on commas that are not inside parentheses. */
function splitTerms(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((t) => t.trim()).filter((t) => t.length > 0);
}

function parseTerm(term: string): Requirement {
  const set = /^([^\s!=(),<>]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
  if (set?.[1] && set[2] && set[3] !== undefined) {
    const values = set[3]
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v.length > 0);
    return { key: set[1], op: set[2] as 'in' | 'notin', values };
  }
  const eq = /^([^\s!=(),<>]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/.exec(term);
  if (eq?.[1] && eq[2] && eq[3] !== undefined) {
    return { key: eq[1], op: eq[2] === '!=' ? 'notin' : 'in', values: [eq[3]] };
  }
  // `key<5`, `key>5`: an integer compared with the label's value read as one
  const cmp = /^([^\s!=(),<>]+)\s*([<>])\s*([^\s!=(),<>]*)$/.exec(term);
  if (cmp?.[1] && cmp[2] && cmp[3] !== undefined) {
    const value = int64(cmp[3]);
    if (value === undefined)
      throw badRequest(
        `unable to parse requirement: values[0]: Invalid value: "${cmp[3]}": for 'Gt', 'Lt' operators, the value must be an integer`,
      );
    return { key: cmp[1], op: cmp[2] === '<' ? 'lt' : 'gt', value };
  }
  const not = /^!\s*([^\s!=(),]+)$/.exec(term);
  if (not?.[1]) return { key: not[1], op: '!exists' };
  if (/^[^\s!=(),]+$/.test(term)) return { key: term, op: 'exists' };
  throw badRequest(`unable to parse requirement: found '${term}', expected: in, notin, =, ==, !=, gt, lt`);
}

function matches(req: Requirement, labels: Record<string, string> | undefined): boolean {
  const has = labels !== undefined && Object.hasOwn(labels, req.key);
  switch (req.op) {
    case 'exists':
      return has;
    case '!exists':
      return !has;
    case 'in':
      return has && req.values.includes(labels[req.key] ?? '');
    case 'notin':
      return !has || !req.values.includes(labels[req.key] ?? '');
    case 'gt':
    case 'lt': {
      const v = has ? int64(labels[req.key]) : undefined;
      if (v === undefined) return false;
      return req.op === 'gt' ? v > req.value : v < req.value;
    }
  }
}

/** Parses a labelSelector query value; an empty selector matches everything. */
export function parseLabelSelector(s: string | undefined | null): Matcher {
  if (!s?.trim()) return () => true;
  const reqs = splitTerms(s).map(parseTerm);
  return (labels) => reqs.every((r) => matches(r, labels));
}

/** meta/v1 LabelSelector (matchLabels + matchExpressions). Nil or empty → undefined (callers decide). */
export function labelSelectorMatcher(sel: unknown): Matcher | undefined {
  const s = sel as
    | {
        matchLabels?: Record<string, string>;
        matchExpressions?: { key: string; operator: string; values?: string[] }[];
      }
    | undefined;
  if (!s) return undefined;
  const reqs: Requirement[] = [];
  for (const [key, value] of Object.entries(s.matchLabels ?? {}))
    reqs.push({ key, op: 'in', values: [value] });
  for (const e of s.matchExpressions ?? []) {
    const op = e.operator.toLowerCase();
    if (op === 'in' || op === 'notin') reqs.push({ key: e.key, op, values: e.values ?? [] });
    else if (op === 'exists') reqs.push({ key: e.key, op: 'exists' });
    else if (op === 'doesnotexist') reqs.push({ key: e.key, op: '!exists' });
  }
  if (reqs.length === 0) return undefined;
  return (labels) => reqs.every((r) => matches(r, labels));
}

export interface FieldRequirement {
  readonly path: string;
  readonly value: string;
  readonly negate: boolean;
}

/** Parses a fieldSelector (`a=b`, `a==b`, `a!=b`, comma-separated), checking each path is supported. */
export function parseFieldSelector(
  s: string | undefined | null,
  supported: readonly string[],
): FieldRequirement[] {
  if (!s?.trim()) return [];
  return splitTerms(s).map((term) => {
    const m = /^([^\s!=]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m?.[1] || !m[2] || m[3] === undefined)
      throw badRequest(`invalid selector: '${s}'; can't understand '${term}'`);
    const path = m[1];
    if (path !== 'metadata.name' && path !== 'metadata.namespace' && !supported.includes(path)) {
      throw badRequest(`field label not supported: ${path}`);
    }
    return { path, value: m[3].trim(), negate: m[2] === '!=' };
  });
}

/** The string value a field selector compares against (missing fields compare as ""). */
export function fieldValue(obj: KubeObject, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return path === 'spec.unschedulable' ? 'false' : '';
  return typeof cur === 'string' ? cur : JSON.stringify(cur);
}

export function matchesFields(obj: KubeObject, reqs: readonly FieldRequirement[]): boolean {
  return reqs.every((r) => (fieldValue(obj, r.path) === r.value) !== r.negate);
}
