// Read-modify-write with a JSON patch whose `test` op guards what we read: a concurrent writer makes
// the server answer 409/422, and we re-read and try again instead of clobbering its change.
import { sleep } from './backoff.ts';
import { isGuardFailure } from './errors.ts';
import type { KubeClients } from './client.ts';
import { JSON_PATCH } from './http.ts';
import type { KubeObject } from './types.ts';

export type JsonPatchOp =
  { op: 'test' | 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

export const GUARD_ATTEMPTS = 10;

/** Escapes a key for a JSON pointer (annotation keys contain "/"). */
export const pointerKey = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Tests `path` holds `current` when it exists; when it is absent (nothing to compare), guards on
 * the resourceVersion instead, because `add` would silently replace a value someone just created.
 */
export function guard(obj: KubeObject, path: string, current: unknown): JsonPatchOp {
  if (current !== undefined) return { op: 'test', path, value: current };
  return { op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion };
}

/**
 * Reads the object, asks `plan` for the ops (undefined = nothing to change) and applies them.
 * Returns true when a patch was applied.
 */
export async function guardedPatch<T extends KubeObject>(
  k: KubeClients,
  path: string,
  plan: (obj: T) => JsonPatchOp[] | undefined,
  signal?: AbortSignal,
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const obj = await k.request<T>({ path, ...(signal ? { signal } : {}) });
    const ops = plan(obj);
    if (!ops) return false;
    try {
      await k.request({
        method: 'PATCH',
        path,
        body: ops,
        contentType: JSON_PATCH,
        ...(signal ? { signal } : {}),
      });
      return true;
    } catch (err) {
      if (!isGuardFailure(err) || attempt >= GUARD_ATTEMPTS) throw err;
      // a short random pause spreads writers that collided
      await sleep(Math.random() * 20 * attempt, signal);
    }
  }
}
