// The three patch formats the API server accepts: JSON merge patch (RFC 7386), JSON patch
// (RFC 6902, with `test`) and strategic merge patch (built-in kinds only; lists merge by key
// where core/v1 declares a patchMergeKey, other lists are replaced).
import { clone } from './clone.ts';
import { badRequest, failure } from './status.ts';
import { StatusError, type Status } from './types.ts';

type Json = unknown;
type JsonMap = Record<string, Json>;

const isMap = (v: Json): v is JsonMap => v !== null && typeof v === 'object' && !Array.isArray(v);

export const MERGE_PATCH = 'application/merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';

export function mergePatch(target: Json, patch: Json): Json {
  if (!isMap(patch)) return patch;
  const out: JsonMap = isMap(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** How the real server answers a JSON patch that does not apply (a failed `test`, a missing path). */
const patchRejected = (): StatusError =>
  new StatusError(
    failure(422, 'Invalid', 'the server rejected our request due to an error in our request', {
      details: {},
    }),
  );

/**
 * The answers to a JSON patch whose `test` op failed: the writer's guard saw that someone wrote
 * first (the JSON patch form of a 409). The request log tells them from a body the server rejects.
 */
export const guardFailures = new WeakSet<Status>();

/** The same answer as any patch that does not apply (details empty, as recorded from kube-apiserver 1.24). */
function testFailed(): StatusError {
  const { status } = patchRejected();
  guardFailures.add(status);
  return new StatusError(status);
}

function parsePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw patchRejected();
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function getAt(doc: Json, tokens: readonly string[]): Json {
  let cur = doc;
  for (const t of tokens) {
    if (Array.isArray(cur)) {
      const i = Number(t);
      if (!/^\d+$/.test(t) || i >= cur.length) throw patchRejected();
      cur = cur[i];
    } else if (isMap(cur)) {
      if (!Object.hasOwn(cur, t)) throw patchRejected();
      cur = cur[t];
    } else throw patchRejected();
  }
  return cur;
}

/** Applies op at tokens in place on a parent container; `doc` is already a private copy. */
function mutate(doc: Json, tokens: readonly string[], op: 'add' | 'remove' | 'replace', value?: Json): Json {
  if (tokens.length === 0) {
    if (op === 'remove') throw patchRejected();
    return value;
  }
  const parent = getAt(doc, tokens.slice(0, -1));
  const last = tokens[tokens.length - 1] as string;
  if (Array.isArray(parent)) {
    const i = last === '-' && op === 'add' ? parent.length : Number(last);
    if (!/^\d+$/.test(last) && last !== '-') throw patchRejected();
    if (op === 'add') {
      if (i > parent.length) throw patchRejected();
      parent.splice(i, 0, value);
    } else {
      if (i >= parent.length) throw patchRejected();
      if (op === 'remove') parent.splice(i, 1);
      else parent[i] = value;
    }
  } else if (isMap(parent)) {
    if (op !== 'add' && !Object.hasOwn(parent, last)) throw patchRejected();
    if (op === 'remove') delete parent[last];
    else parent[last] = value;
  } else throw patchRejected();
  return doc;
}

export function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a);
    return (
      ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]))
    );
  }
  return false;
}

/**
 * Does the document hold `value` at the path? A path no longer there fails the test as a changed
 * value does (the same 422): the writer read another document, e.g. taints removed or the Node
 * registered again since its read.
 */
function testHolds(doc: Json, tokens: readonly string[], value: Json): boolean {
  try {
    return deepEqual(getAt(doc, tokens), value);
  } catch {
    return false;
  }
}

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: Json;
}

export function jsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops))
    throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc = clone(target);
  for (const raw of ops as JsonPatchOp[]) {
    if (!isMap(raw) || typeof raw.path !== 'string') throw badRequest('invalid JSON patch operation');
    const tokens = parsePointer(raw.path);
    switch (raw.op) {
      case 'add':
      case 'replace':
        if (!Object.hasOwn(raw, 'value')) throw badRequest(`missing value for ${raw.op} operation`);
        doc = mutate(doc, tokens, raw.op, clone(raw.value));
        break;
      case 'remove':
        doc = mutate(doc, tokens, 'remove');
        break;
      case 'test':
        if (!testHolds(doc, tokens, raw.value ?? null)) throw testFailed();
        break;
      case 'move':
      case 'copy': {
        const from = parsePointer(raw.from ?? '');
        const value = clone(getAt(doc, from));
        if (raw.op === 'move') doc = mutate(doc, from, 'remove');
        doc = mutate(doc, tokens, 'add', value);
        break;
      }
      default:
        throw badRequest(`Unexpected kind: ${String(raw.op)}`);
    }
  }
  return doc;
}

/** patchMergeKey of the core/v1 lists that merge (by field name; good enough for the kinds served). */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ports: 'containerPort',
  conditions: 'type',
  addresses: 'type',
  imagePullSecrets: 'name',
  ownerReferences: 'uid',
  hostAliases: 'ip',
};
/** Lists of scalars with patchStrategy merge: the result is the union. */
const MERGE_PRIMITIVES = new Set(['finalizers', 'podCIDRs']);

function mergeKeyedList(orig: Json[], patch: Json[], key: string): Json[] {
  if (patch.some((p) => isMap(p) && p.$patch === 'replace')) {
    return patch.filter((p) => !(isMap(p) && p.$patch === 'replace'));
  }
  const out = [...orig];
  for (const item of patch) {
    if (!isMap(item)) continue;
    const idx = out.findIndex((o) => isMap(o) && o[key] === item[key]);
    if (item.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
    } else if (idx >= 0) out[idx] = strategicMerge(out[idx], item);
    else out.push(strategicMerge({}, item));
  }
  return out;
}

export function strategicMerge(target: Json, patch: Json): Json {
  if (!isMap(patch)) return patch;
  if (patch.$patch === 'delete') return undefined;
  const out: JsonMap = isMap(target) && patch.$patch !== 'replace' ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const cur = out[field];
      if (Array.isArray(cur) && Array.isArray(v)) out[field] = cur.filter((x) => !v.includes(x));
      continue;
    }
    const cur = out[k];
    if (v === null) delete out[k];
    else if (Array.isArray(v) && MERGE_KEYS[k] && Array.isArray(cur))
      out[k] = mergeKeyedList(cur, v, MERGE_KEYS[k]);
    else if (Array.isArray(v) && MERGE_PRIMITIVES.has(k) && Array.isArray(cur)) {
      out[k] = [...cur, ...v.filter((x) => !cur.includes(x))];
    } else if (isMap(v)) {
      const merged = strategicMerge(cur, v);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    } else out[k] = Array.isArray(v) ? v.filter((x) => !(isMap(x) && x.$patch !== undefined)) : v;
  }
  return out;
}
