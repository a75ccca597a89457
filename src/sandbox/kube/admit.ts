// What a write through the API must pass before the store: kube-apiserver's decode of the body (or
// of the patched object) into its Go type, then ValidateObjectMeta's label and annotation rules.
import { decodeObject } from './decode.ts';
import { metaViolations } from './meta-rules.ts';
import type { ResourceType } from './resources.ts';
import { badRequest, invalid } from './status.ts';
import type { KubeObject } from './types.ts';

function validated(rt: ResourceType, obj: KubeObject): KubeObject {
  const causes = metaViolations(obj.metadata);
  if (causes.length) throw invalid(rt.kind, obj.metadata.name ?? '', causes, rt.builtin ? '' : rt.group);
  return obj;
}

/** A create's or replace's body as stored: 400 when it does not decode, 422 when its metadata is invalid. */
export function admitBody(rt: ResourceType, obj: KubeObject): KubeObject {
  const d = decodeObject(rt, obj);
  if ('error' in d)
    throw badRequest(`${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: ${d.error}`);
  return validated(rt, d.obj);
}

/** A patched object as stored: a decode failure is a 422 on the field "patch" (patch.go). */
export function admitPatched(rt: ResourceType, obj: KubeObject): KubeObject {
  const d = decodeObject(rt, obj);
  if ('error' in d)
    throw invalid('', '', [
      {
        reason: 'FieldValueInvalid',
        field: 'patch',
        message: `Invalid value: ${JSON.stringify(JSON.stringify(obj))}: ${d.error}`,
      },
    ]);
  return validated(rt, d.obj);
}
