// The one protobuf body the sandbox reads: kubectl (client-go) sends the DeleteOptions of a DELETE
// as application/vnd.kubernetes.protobuf (`kubectl drain --disable-eviction`, `kubectl delete`),
// which a real API server accepts. The envelope is "k8s\0" + runtime.Unknown{typeMeta=1, raw=2};
// DeleteOptions: gracePeriodSeconds=1, preconditions=2 {uid=1, resourceVersion=2},
// orphanDependents=3, propagationPolicy=4, dryRun=5. Any other kind is answered 415.
import { StatusError } from './types.ts';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

interface Field {
  readonly no: number;
  readonly varint?: bigint;
  readonly bytes?: Buffer;
}

function varint(buf: Buffer, at: number): [bigint, number] {
  let v = 0n;
  let shift = 0n;
  for (let i = at; i < buf.length; i++) {
    const b = buf[i] ?? 0;
    v |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [v, i + 1];
    shift += 7n;
  }
  throw new Error('truncated varint');
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  while (at < buf.length) {
    const [key, next] = varint(buf, at);
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [v, after] = varint(buf, next);
      out.push({ no, varint: v });
      at = after;
    } else if (wire === 2) {
      const [len, start] = varint(buf, next);
      const end = start + Number(len);
      out.push({ no, bytes: buf.subarray(start, end) });
      at = end;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const text = (f: Field | undefined): string | undefined => f?.bytes?.toString('utf8');

const unsupported = (what: string) =>
  new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `the sandbox reads no protobuf body but DeleteOptions (got ${what})`,
    reason: 'UnsupportedMediaType',
    code: 415,
  });

/** The JSON form of a protobuf DeleteOptions body. */
export function decodeProtobufBody(buf: Buffer): Record<string, unknown> {
  if (!buf.subarray(0, 4).equals(MAGIC)) throw unsupported('no k8s protobuf envelope');
  const unknown = fields(buf.subarray(4));
  const typeMeta = fields(unknown.find((f) => f.no === 1)?.bytes ?? Buffer.alloc(0));
  const kind = text(typeMeta.find((f) => f.no === 2));
  if (kind !== 'DeleteOptions') throw unsupported(kind ?? 'no kind');
  const raw = fields(unknown.find((f) => f.no === 2)?.bytes ?? Buffer.alloc(0));
  const out: Record<string, unknown> = { kind, apiVersion: text(typeMeta.find((f) => f.no === 1)) ?? 'v1' };
  for (const f of raw) {
    if (f.no === 1 && f.varint !== undefined) out.gracePeriodSeconds = Number(BigInt.asIntN(64, f.varint));
    else if (f.no === 2 && f.bytes) {
      const p = fields(f.bytes);
      const uid = text(p.find((x) => x.no === 1));
      const resourceVersion = text(p.find((x) => x.no === 2));
      out.preconditions = { ...(uid ? { uid } : {}), ...(resourceVersion ? { resourceVersion } : {}) };
    } else if (f.no === 3 && f.varint !== undefined) out.orphanDependents = f.varint !== 0n;
    else if (f.no === 4) out.propagationPolicy = text(f);
    else if (f.no === 5) out.dryRun = [...((out.dryRun as string[] | undefined) ?? []), text(f) ?? ''];
  }
  return out;
}
