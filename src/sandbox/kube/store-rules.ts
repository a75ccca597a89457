// Rules the store applies that do not need its state: pod grace periods, delete preconditions,
// CRD establishment, patch body parsing.
import { load as loadYaml } from 'js-yaml';
import { APPLY_PATCH } from './patch.ts';
import { resourceFromCrd, type ResourceType } from './resources.ts';
import { badRequest, conflict, invalid } from './status.ts';
import type { DeleteOptions, KubeObject, Status } from './types.ts';

const GENERATE_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** Validates a CustomResourceDefinition and sets the status of an established one. */
export function establishCrd(crd: KubeObject, at: string): void {
  const rt = resourceFromCrd(crd);
  const name = crd.metadata.name ?? '';
  if (!rt) {
    throw invalid(
      'CustomResourceDefinition',
      name,
      [
        {
          reason: 'FieldValueRequired',
          field: 'spec',
          message: 'Required value: group, names.plural, names.kind and versions',
        },
      ],
      'apiextensions.k8s.io',
    );
  }
  if (name !== rt.id) {
    throw invalid(
      'CustomResourceDefinition',
      name,
      [
        {
          reason: 'FieldValueInvalid',
          field: 'metadata.name',
          message: `Invalid value: "${name}": must be spec.names.plural+"."+spec.group`,
        },
      ],
      'apiextensions.k8s.io',
    );
  }
  const spec = crd.spec as { names: unknown };
  crd.status = {
    acceptedNames: spec.names,
    storedVersions: [rt.version],
    conditions: [
      { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
      {
        type: 'Established',
        status: 'True',
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
      },
    ].map((c) => ({ ...c, lastTransitionTime: at })),
  };
}

export function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_CHARS[Math.floor(Math.random() * GENERATE_CHARS.length)];
  return s;
}

export function tooOld(requested: number, floor: number): Status {
  return {
    kind: 'Status' as const,
    apiVersion: 'v1' as const,
    metadata: {},
    status: 'Failure' as const,
    message: `too old resource version: ${requested} (${floor})`,
    reason: 'Expired',
    code: 410,
  };
}

/** The grace period the pod strategy applies: 0 for unscheduled or finished pods. */
export function podGrace(pod: KubeObject, requested: number | undefined): number {
  const spec = pod.spec as { nodeName?: string; terminationGracePeriodSeconds?: number } | undefined;
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  if (!spec?.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
  const g = requested ?? spec.terminationGracePeriodSeconds ?? 30;
  return Math.max(0, g);
}

export function checkPreconditions(rt: ResourceType, obj: KubeObject, opts: DeleteOptions): void {
  const p = opts.preconditions;
  const name = obj.metadata.name ?? '';
  if (p?.uid && p.uid !== obj.metadata.uid) {
    throw conflict(
      rt,
      name,
      `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${obj.metadata.uid}`,
    );
  }
  if (p?.resourceVersion && p.resourceVersion !== obj.metadata.resourceVersion) {
    throw conflict(
      rt,
      name,
      `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion}`,
    );
  }
}

export function parseBody(body: unknown, type: string): unknown {
  if (typeof body !== 'string' && !Buffer.isBuffer(body)) return body;
  const text = body.toString();
  try {
    return type === APPLY_PATCH ? loadYaml(text) : JSON.parse(text);
  } catch (e) {
    throw badRequest(`error decoding patch: ${(e as Error).message}`);
  }
}
