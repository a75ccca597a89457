// The D-Bus wire format (D-Bus specification, "Message Protocol"), little-endian only, for the few messages
// drainer exchanges with systemd-logind: method calls and their returns/errors, and signals. Values are
// marshalled by signature: y b n q i u x t s o g v, arrays (a{..} as arrays of [key, value]) and structs.
//
// Why a wire of our own (issue 49's decision, made against the real logind in test/shutdown):
// - holding a logind inhibitor means holding the file descriptor its Inhibit call returns. Node's sockets
//   cannot receive SCM_RIGHTS, so no pure-JavaScript client can hold one;
// - dbus-next (the library the issue names) passes fds only through the optional native `usocket`: its
//   0.10.2 dates from 2021 and wants usocket ^0.3.0; a native build needs python3 and a compiler, which the
//   image's node:24 bookworm-slim stages lack (npm skips an optional dependency that fails to build, so the
//   image would run and never hold a lock), and the run stage is FROM scratch;
// - so the lock is held by a child, systemd's own `systemd-inhibit` (src/logind/inhibitor.ts), killed to
//   release it, and what Node must speak is small: Hello, AddMatch, Properties.Get and the
//   PrepareForShutdown(b) signal. That is this file and bus.ts, with no new runtime dependency.

export type DbusValue = number | bigint | boolean | string | DbusVariant | DbusValue[];
export interface DbusVariant {
  readonly signature: string;
  readonly value: DbusValue;
}

export const MessageType = { MethodCall: 1, MethodReturn: 2, Error: 3, Signal: 4 } as const;

export interface DbusMessage {
  type: number;
  serial: number;
  flags?: number;
  path?: string;
  interface?: string;
  member?: string;
  errorName?: string;
  replySerial?: number;
  destination?: string;
  sender?: string;
  signature?: string;
  body?: DbusValue[];
}

const FIELD = {
  path: [1, 'o'],
  interface: [2, 's'],
  member: [3, 's'],
  errorName: [4, 's'],
  replySerial: [5, 'u'],
  destination: [6, 's'],
  sender: [7, 's'],
  signature: [8, 'g'],
} as const;

const ALIGN: Record<string, number> = {
  y: 1,
  b: 4,
  n: 2,
  q: 2,
  i: 4,
  u: 4,
  x: 8,
  t: 8,
  d: 8,
  s: 4,
  o: 4,
  g: 1,
  v: 1,
  a: 4,
  '(': 8,
  '{': 8,
};

/** Splits a signature into its complete types: "sa{sv}(ii)" → ["s", "a{sv}", "(ii)"]. */
export function splitSignature(sig: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < sig.length) {
    const end = typeEnd(sig, i);
    out.push(sig.slice(i, end));
    i = end;
  }
  return out;
}

function typeEnd(sig: string, i: number): number {
  const c = sig[i];
  if (c === 'a') return typeEnd(sig, i + 1);
  if (c === '(' || c === '{') {
    const close = c === '(' ? ')' : '}';
    let j = i + 1;
    while (sig[j] !== close) {
      if (j >= sig.length) throw new Error(`unbalanced D-Bus signature ${sig}`);
      j = typeEnd(sig, j);
    }
    return j + 1;
  }
  if (c === undefined || ALIGN[c] === undefined)
    throw new Error(`unsupported D-Bus type ${String(c)} in ${sig}`);
  return i + 1;
}

class Writer {
  private buf = Buffer.alloc(256);
  length = 0;
  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.alloc(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
  align(n: number): void {
    const pad = (n - (this.length % n)) % n;
    this.ensure(pad);
    this.buf.fill(0, this.length, this.length + pad);
    this.length += pad;
  }
  u8(v: number): void {
    this.ensure(1);
    this.buf.writeUInt8(v, this.length++);
  }
  u32(v: number): void {
    this.align(4);
    this.ensure(4);
    this.buf.writeUInt32LE(v, this.length);
    this.length += 4;
  }
  bytes(b: Buffer): void {
    this.ensure(b.length);
    b.copy(this.buf, this.length);
    this.length += b.length;
  }
  setU32(at: number, v: number): void {
    this.buf.writeUInt32LE(v, at);
  }
  result(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.length));
  }

  value(sig: string, v: DbusValue): void {
    const c = sig[0] ?? '';
    this.align(ALIGN[c] ?? 1);
    switch (c) {
      case 'y':
        return this.u8(Number(v));
      case 'b':
        return this.u32(v ? 1 : 0);
      case 'n':
      case 'q':
        this.ensure(2);
        if (c === 'n') this.buf.writeInt16LE(Number(v), this.length);
        else this.buf.writeUInt16LE(Number(v), this.length);
        this.length += 2;
        return;
      case 'i':
        this.ensure(4);
        this.buf.writeInt32LE(Number(v), this.length);
        this.length += 4;
        return;
      case 'u':
        return this.u32(Number(v));
      case 'x':
      case 't':
        this.ensure(8);
        if (c === 'x') this.buf.writeBigInt64LE(BigInt(v as bigint | number), this.length);
        else this.buf.writeBigUInt64LE(BigInt(v as bigint | number), this.length);
        this.length += 8;
        return;
      case 's':
      case 'o': {
        const b = Buffer.from(v as string, 'utf8');
        this.u32(b.length);
        this.bytes(b);
        return this.u8(0);
      }
      case 'g': {
        const b = Buffer.from(v as string, 'ascii');
        this.u8(b.length);
        this.bytes(b);
        return this.u8(0);
      }
      case 'v': {
        const variant = v as DbusVariant;
        this.value('g', variant.signature);
        return this.value(variant.signature, variant.value);
      }
      case 'a':
        return this.array(sig.slice(1), v as DbusValue[]);
      case '(':
      case '{': {
        const fields = splitSignature(sig.slice(1, -1));
        const items = v as DbusValue[];
        fields.forEach((f, i) => this.value(f, items[i] as DbusValue));
        return;
      }
      default:
        throw new Error(`unsupported D-Bus type ${sig}`);
    }
  }

  private array(elem: string, items: DbusValue[]): void {
    this.u32(0);
    const lengthAt = this.length - 4;
    this.align(ALIGN[elem[0] ?? ''] ?? 1);
    const start = this.length;
    for (const item of items) this.value(elem, item);
    this.setU32(lengthAt, this.length - start);
  }
}

class Reader {
  private readonly buf: Buffer;
  pos: number;
  // Alignment is counted from the message's start; the body starts 8-aligned, so a body reader counts from it.
  private readonly base: number;
  constructor(buf: Buffer, pos: number, base: number) {
    this.buf = buf;
    this.pos = pos;
    this.base = base;
  }
  align(n: number): void {
    this.pos += (n - ((this.pos - this.base) % n)) % n;
  }
  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new Error('truncated D-Bus message');
  }

  value(sig: string): DbusValue {
    const c = sig[0] ?? '';
    this.align(ALIGN[c] ?? 1);
    const at = this.pos;
    switch (c) {
      case 'y':
        this.need(1);
        this.pos += 1;
        return this.buf.readUInt8(at);
      case 'b':
      case 'u':
      case 'i': {
        this.need(4);
        this.pos += 4;
        if (c === 'i') return this.buf.readInt32LE(at);
        const u = this.buf.readUInt32LE(at);
        return c === 'b' ? u !== 0 : u;
      }
      case 'n':
      case 'q':
        this.need(2);
        this.pos += 2;
        return c === 'n' ? this.buf.readInt16LE(at) : this.buf.readUInt16LE(at);
      case 'x':
      case 't':
        this.need(8);
        this.pos += 8;
        return c === 'x' ? this.buf.readBigInt64LE(at) : this.buf.readBigUInt64LE(at);
      case 's':
      case 'o': {
        const len = this.value('u') as number;
        this.need(len + 1);
        const s = this.buf.toString('utf8', this.pos, this.pos + len);
        this.pos += len + 1;
        return s;
      }
      case 'g': {
        const len = this.value('y') as number;
        this.need(len + 1);
        const s = this.buf.toString('ascii', this.pos, this.pos + len);
        this.pos += len + 1;
        return s;
      }
      case 'v': {
        const signature = this.value('g') as string;
        return { signature, value: this.value(signature) };
      }
      case 'a': {
        const len = this.value('u') as number;
        const elem = sig.slice(1);
        this.align(ALIGN[elem[0] ?? ''] ?? 1);
        const end = this.pos + len;
        const items: DbusValue[] = [];
        while (this.pos < end) items.push(this.value(elem));
        return items;
      }
      case '(':
      case '{':
        return splitSignature(sig.slice(1, -1)).map((f) => this.value(f));
      default:
        throw new Error(`unsupported D-Bus type ${sig}`);
    }
  }
}

/** One message as bytes (little-endian, protocol version 1). */
export function encodeMessage(m: DbusMessage): Buffer {
  const body = new Writer();
  const types = m.signature ? splitSignature(m.signature) : [];
  types.forEach((t, i) => body.value(t, m.body?.[i] ?? 0));
  const fields: DbusValue[] = [];
  for (const [key, [code, sig]] of Object.entries(FIELD)) {
    const v = m[key as keyof typeof FIELD];
    if (v !== undefined && v !== '') fields.push([code, { signature: sig, value: v }]);
  }
  const w = new Writer();
  w.u8(0x6c); // 'l'
  w.u8(m.type);
  w.u8(m.flags ?? 0);
  w.u8(1);
  w.u32(body.length);
  w.u32(m.serial);
  w.value('a(yv)', fields);
  w.align(8);
  w.bytes(body.result());
  return w.result();
}

/** The length of the first whole message in buf, or 0 when more bytes are needed. */
export function messageLength(buf: Buffer): number {
  if (buf.length < 16) return 0;
  if (buf[0] !== 0x6c) throw new Error('big-endian D-Bus messages are not supported');
  const bodyLength = buf.readUInt32LE(4);
  const fieldsLength = buf.readUInt32LE(12);
  const headerEnd = 16 + fieldsLength + ((8 - ((16 + fieldsLength) % 8)) % 8);
  const total = headerEnd + bodyLength;
  return buf.length >= total ? total : 0;
}

/** Decodes one whole message (messageLength(buf) bytes). */
export function decodeMessage(buf: Buffer): DbusMessage {
  const header = new Reader(buf, 12, 0);
  const fields = header.value('a(yv)') as [number, DbusVariant][];
  header.align(8);
  const m: DbusMessage = { type: buf.readUInt8(1), flags: buf.readUInt8(2), serial: buf.readUInt32LE(8) };
  for (const [code, variant] of fields) {
    const entry = Object.entries(FIELD).find(([, [c]]) => c === code);
    if (entry) (m as unknown as Record<string, DbusValue>)[entry[0]] = variant.value;
  }
  const bodyStart = header.pos;
  const body = new Reader(buf, bodyStart, bodyStart);
  m.body = m.signature ? splitSignature(m.signature).map((t) => body.value(t)) : [];
  return m;
}
