// A PATCH request against a stored object: which content types a resource accepts, and the
// patched object with the server's metadata put back (a resourceVersion in the patch is a
// precondition, as on the real server).
import {
  APPLY_PATCH,
  JSON_PATCH,
  jsonPatch,
  MERGE_PATCH,
  mergePatch,
  STRATEGIC_MERGE_PATCH,
  strategicMerge,
} from './patch.ts';
import type { ResourceType } from './resources.ts';
import { badRequest, modifiedConflict, unsupportedPatch } from './status.ts';
import type { KubeObject } from './types.ts';

/** The patch type of `contentType`, or a 415 when `rt` does not accept it. */
export function patchType(rt: ResourceType, contentType: string): string {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  const accepted = [JSON_PATCH, MERGE_PATCH, ...(rt.builtin ? [STRATEGIC_MERGE_PATCH] : []), APPLY_PATCH];
  if (!accepted.includes(type)) throw unsupportedPatch(accepted, type === STRATEGIC_MERGE_PATCH);
  return type;
}

/** `current` with `patchDoc` applied, ready for an update under `current`'s resourceVersion. */
export function patched(
  rt: ResourceType,
  current: KubeObject,
  name: string,
  type: string,
  patchDoc: unknown,
): KubeObject {
  let result: unknown;
  if (type === JSON_PATCH) result = jsonPatch(current, patchDoc);
  else if (type === STRATEGIC_MERGE_PATCH) result = strategicMerge(current, patchDoc);
  else result = mergePatch(current, patchDoc);
  const next = result as KubeObject;
  if (!next || typeof next !== 'object' || typeof next.metadata !== 'object')
    throw badRequest('patch removed metadata');
  if (next.metadata.resourceVersion !== current.metadata.resourceVersion && next.metadata.resourceVersion) {
    throw modifiedConflict(rt, name);
  }
  next.metadata = {
    ...next.metadata,
    name,
    namespace: current.metadata.namespace,
    resourceVersion: current.metadata.resourceVersion,
  };
  return next;
}
