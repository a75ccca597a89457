// Turns zod issues into one readable line per problem: the key path, what was expected, what was
// given (never the value of a secret key), and where it came from (file name, env var, flag).
import type * as z from './zod.ts';
import type { ConfigIssue } from '../errors.ts';
import { closest } from './closest.ts';
import { isSecretKey, keysAt, kindOf, schemaAt } from './schema-walk.ts';

type Issue = z.core.$ZodIssue;

const typeName = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a mapping' : `a ${typeof v}`;

/** "got …" text; the value itself only where it is not a secret. */
export function describeValue(value: unknown, path: readonly PropertyKey[]): string {
  if (value === undefined) return 'nothing';
  if (path.some((k) => isSecretKey(String(k)))) return typeName(value);
  if (typeof value === 'string')
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return typeName(value);
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let cur = raw;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return cur;
}

const EXPECTED_TYPE: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  string: 'a string',
  object: 'a mapping',
  record: 'a mapping',
  array: 'a list',
};

function numberWord(path: readonly PropertyKey[]): string {
  const s = schemaAt(path);
  return s && kindOf(s) === 'integer' ? 'an integer' : 'a number';
}

function expectation(issue: Issue, got: string): string {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${EXPECTED_TYPE[issue.expected] ?? issue.expected}, got ${got}`;
    case 'too_small':
      if (issue.origin === 'string')
        return `expected a string of at least ${issue.minimum} characters, got ${got}`;
      return `expected ${numberWord(issue.path)} ${issue.inclusive ? '>=' : '>'} ${issue.minimum}, got ${got}`;
    case 'too_big':
      if (issue.origin === 'string') return `expected a string of at most ${issue.maximum} characters`;
      return `expected ${numberWord(issue.path)} ${issue.inclusive ? '<=' : '<'} ${issue.maximum}, got ${got}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => String(v)).join(', ')}, got ${got}`;
    case 'invalid_format':
      if (issue.format === 'url') return `expected a URL, got ${got}`;
      return `${issue.message}, got ${got}`;
    default:
      // a check of ours (a time zone, a window's time): the value too, as every other line says it
      return /\bgot\b/.test(issue.message) ? issue.message : `${issue.message}, got ${got}`;
  }
}

const norm = (s: string) => s.toLowerCase().replace(/[_-]/g, '');

function suggest(key: string, parentPath: readonly PropertyKey[]): string {
  const known = keysAt(parentPath);
  const match = known.find((k) => norm(k) === norm(key));
  if (match) return ` (did you mean "${match}"?)`;
  // a typo: the nearest key, when it is near enough to be meant (as for DRAINER_* variables)
  const near = closest(
    key,
    known.map((k) => [k, k] as [string, string]),
  );
  return near && near.distance <= Math.max(2, Math.floor(key.length / 3))
    ? ` (did you mean "${near.name}"?)`
    : '';
}

/** One ConfigIssue per problem; `source` names where the values came from. */
export function toConfigIssues(issues: readonly Issue[], raw: unknown, source: string): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const path = [...issue.path, key].map(String).join('.');
        out.push({ path, message: `unknown key${suggest(key, issue.path)} (in ${source})` });
      }
      continue;
    }
    const got = describeValue(valueAt(raw, issue.path), issue.path);
    out.push({
      path: issue.path.map(String).join('.'),
      message: `${expectation(issue, got)} (in ${source})`,
    });
  }
  return out;
}
