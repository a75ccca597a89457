// The decode step of kube-apiserver for the built-in kinds drainer writes: each typed field must
// hold its Go type (an int where an int32 goes, strings in label and annotation maps, a MicroTime
// with 6 fractional digits), else the request is refused before any validation: 400 "<Kind> in
// version "v1" cannot be handled as a <Kind>: …" on a create or replace, 422 "patch: Invalid value"
// on a patch (patch.go decodes the patched object). Times are stored as the real one serializes
// them. Fields not listed here are taken as they come (the sandbox does not model every field).
import { decodeMicroTime, decodeTime } from './wire-time.ts';
import type { ResourceType } from './resources.ts';
import type { KubeObject } from './types.ts';

type Scalar = 'string' | 'int32' | 'int64' | 'bool' | 'time' | 'microTime' | 'intOrString';
/** A Go struct: its name (as json errors name it) and its fields by JSON name. */
interface Struct {
  readonly struct: string;
  readonly fields: Readonly<Record<string, Field>>;
}
type Field = Scalar | Struct | { readonly list: Field } | { readonly map: Field };

const S = 'string';
const ownerRef: Struct = {
  struct: 'OwnerReference',
  fields: { apiVersion: S, kind: S, name: S, uid: S, controller: 'bool', blockOwnerDeletion: 'bool' },
};
const objectMeta: Struct = {
  struct: 'ObjectMeta',
  fields: {
    name: S,
    generateName: S,
    namespace: S,
    uid: S,
    resourceVersion: S,
    generation: 'int64',
    creationTimestamp: 'time',
    deletionTimestamp: 'time',
    deletionGracePeriodSeconds: 'int64',
    labels: { map: S },
    annotations: { map: S },
    finalizers: { list: S },
    ownerReferences: { list: ownerRef },
  },
};
const labelSelector: Struct = { struct: 'LabelSelector', fields: { matchLabels: { map: S } } };

/** The typed fields of each built-in kind, beside metadata. */
const KINDS: Readonly<Record<string, Readonly<Record<string, Field>>>> = {
  nodes: {
    spec: {
      struct: 'NodeSpec',
      fields: {
        unschedulable: 'bool',
        taints: { list: { struct: 'Taint', fields: { key: S, value: S, effect: S, timeAdded: 'time' } } },
      },
    },
  },
  'leases.coordination.k8s.io': {
    spec: {
      struct: 'LeaseSpec',
      fields: {
        holderIdentity: S,
        leaseDurationSeconds: 'int32',
        acquireTime: 'microTime',
        renewTime: 'microTime',
        leaseTransitions: 'int32',
      },
    },
  },
  events: {
    involvedObject: {
      struct: 'ObjectReference',
      fields: { kind: S, namespace: S, name: S, uid: S, apiVersion: S, resourceVersion: S, fieldPath: S },
    },
    reason: S,
    message: S,
    type: S,
    action: S,
    reportingComponent: S,
    reportingInstance: S,
    count: 'int32',
    firstTimestamp: 'time',
    lastTimestamp: 'time',
    eventTime: 'microTime',
    series: { struct: 'EventSeries', fields: { count: 'int32', lastObservedTime: 'microTime' } },
    source: { struct: 'EventSource', fields: { component: S, host: S } },
  },
  'poddisruptionbudgets.policy': {
    spec: {
      struct: 'PodDisruptionBudgetSpec',
      fields: { minAvailable: 'intOrString', maxUnavailable: 'intOrString', selector: labelSelector },
    },
  },
  pods: {
    spec: {
      struct: 'PodSpec',
      fields: {
        nodeName: S,
        terminationGracePeriodSeconds: 'int64',
        priority: 'int32',
        tolerations: {
          list: {
            struct: 'Toleration',
            fields: { key: S, operator: S, value: S, effect: S, tolerationSeconds: 'int64' },
          },
        },
      },
    },
  },
};

/** A failed decode: Go's error text. */
class Undecodable extends Error {}

const jsonKind = (v: unknown): string =>
  Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'bool' : typeof v;

const INT_RANGE = { int32: 2 ** 31, int64: 2 ** 63 } as const;

/** `v` decoded as `f` (a new value for times; the same otherwise). `at`: the Go struct and JSON path. */
function decode(f: Field, v: unknown, at: { struct: string; path: string }): unknown {
  if (v === null || v === undefined) return v; // null decodes to the zero value; undefined is no field
  const wrong = (type: string, shown = jsonKind(v)): never => {
    throw new Undecodable(
      `json: cannot unmarshal ${shown} into Go struct field ${at.struct}.${at.path} of type ${type}`,
    );
  };
  if (typeof f === 'string') return scalar(f, v, wrong);
  if ('list' in f) {
    if (!Array.isArray(v)) return wrong(`[]${goType(f.list)}`);
    return v.map((item) => decode(f.list, item, at));
  }
  if (typeof v !== 'object' || Array.isArray(v))
    return wrong('map' in f ? `map[string]${goType(f.map)}` : `v1.${f.struct}`);
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = { ...o };
  if ('map' in f) {
    for (const [k, item] of Object.entries(o)) out[k] = decode(f.map, item, at);
    return out;
  }
  for (const [k, child] of Object.entries(f.fields))
    if (Object.hasOwn(o, k))
      out[k] = decode(child, o[k], { struct: f.struct, path: at.path ? `${at.path}.${k}` : k });
  return out;
}

function scalar(f: Scalar, v: unknown, wrong: (type: string, shown?: string) => never): unknown {
  switch (f) {
    case 'string':
      return typeof v === 'string' ? v : wrong('string');
    case 'bool':
      return typeof v === 'boolean' ? v : wrong('bool');
    case 'int32':
    case 'int64':
      if (typeof v !== 'number') return wrong(f);
      if (!Number.isInteger(v) || Math.abs(v) >= INT_RANGE[f]) return wrong(f, `number ${v}`);
      return v;
    case 'intOrString':
      if (typeof v === 'string') return v;
      if (typeof v !== 'number')
        throw new Undecodable(`json: cannot unmarshal ${jsonKind(v)} into Go value of type int32`);
      if (!Number.isInteger(v))
        throw new Undecodable(`json: cannot unmarshal number ${v} into Go value of type int32`);
      return v;
    case 'time':
    case 'microTime': {
      if (typeof v !== 'string')
        throw new Undecodable(`json: cannot unmarshal ${jsonKind(v)} into Go value of type string`);
      const d = f === 'time' ? decodeTime(v) : decodeMicroTime(v);
      if ('error' in d) throw new Undecodable(d.error);
      return d.value;
    }
  }
}

const goType = (f: Field): string =>
  typeof f === 'string'
    ? f === 'time' || f === 'microTime'
      ? `v1.${f === 'time' ? 'Time' : 'MicroTime'}`
      : f === 'intOrString'
        ? 'intstr.IntOrString'
        : f
    : 'list' in f
      ? `[]${goType(f.list)}`
      : 'map' in f
        ? `map[string]${goType(f.map)}`
        : `v1.${f.struct}`;

/**
 * The object as kube-apiserver would decode it (times in their stored form), or the error text
 * of the decode that fails. Custom resources are only checked in their metadata.
 */
export function decodeObject(rt: ResourceType, obj: KubeObject): { obj: KubeObject } | { error: string } {
  try {
    const fields = { metadata: objectMeta, ...(rt.builtin ? KINDS[rt.id] : {}) };
    const top: Struct = { struct: rt.kind, fields };
    return { obj: decode(top, obj, { struct: rt.kind, path: '' }) as KubeObject };
  } catch (err) {
    if (err instanceof Undecodable) return { error: err.message };
    throw err;
  }
}
