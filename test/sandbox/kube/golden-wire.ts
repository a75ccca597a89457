// Replays golden-wire.json: exchanges at the byte level on one raw TCP connection each (what a
// client's bytes do to the server's parsing), beside the recorded exchanges of ../shared/kube-golden.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareAnswer, type Exception } from './golden-compare.ts';
import type { Api, Json } from './helpers.ts';

interface Send {
  readonly send: string;
  readonly answer?: { status: number; body: Json; values?: Record<string, unknown> };
  readonly raw?: string;
  readonly closed?: boolean;
}

export interface WireExchange {
  readonly name: string;
  readonly provenance: 'derived' | 'recorded';
  readonly sends: readonly Send[];
}

export interface WireGolden {
  readonly setup: {
    namespace: string;
    pods: { name: string; nodeName: string; terminationGracePeriodSeconds: number; running: boolean }[];
  };
  readonly exchanges: readonly WireExchange[];
}

export function readWireGolden(): WireGolden {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), 'golden-wire.json');
  return JSON.parse(readFileSync(file, 'utf8')) as WireGolden;
}

export async function setUpWireGolden(api: Api, setup: WireGolden['setup']): Promise<void> {
  const ok = (what: string, res: { status: number }) => {
    if (res.status >= 300) throw new Error(`setup ${what}: ${res.status}`);
  };
  ok('node', await api.call('POST', '/api/v1/nodes', { metadata: { name: 'golden-node' } }));
  const ns = setup.namespace;
  ok('namespace', await api.call('POST', '/api/v1/namespaces', { metadata: { name: ns } }));
  for (const p of setup.pods) {
    const spec = {
      containers: [{ name: 'c', image: 'registry.example/web:1' }],
      nodeName: p.nodeName,
      terminationGracePeriodSeconds: p.terminationGracePeriodSeconds,
    };
    ok(p.name, await api.call('POST', `/api/v1/namespaces/${ns}/pods`, { metadata: { name: p.name }, spec }));
    if (p.running)
      ok(
        `${p.name} Running`,
        await api.call(
          'PATCH',
          `/api/v1/namespaces/${ns}/pods/${p.name}/status`,
          { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
          'application/merge-patch+json',
        ),
      );
  }
}

/** The bytes a connection receives, read one HTTP answer at a time. */
class RawConnection {
  #buf = Buffer.alloc(0);
  #closed = false;
  #wake: (() => void) | undefined;
  readonly socket: Socket;

  constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (c: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, c]);
      this.#wake?.();
    });
    socket.on('close', () => {
      this.#closed = true;
      this.#wake?.();
    });
    socket.on('error', () => undefined);
  }

  async #until<T>(probe: () => T | undefined, what: string): Promise<T> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const got = probe();
      if (got !== undefined) return got;
      if (this.#closed) throw new Error(`connection closed while waiting for ${what}`);
      if (Date.now() > deadline) throw new Error(`no ${what} within 5 s`);
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, 50);
      });
    }
  }

  /** One answer (Content-Length or chunked): its status and JSON body. */
  async answer(): Promise<{ status: number; body: Json }> {
    const { status, text, used } = await this.#until(() => parseAnswer(this.#buf), 'an answer');
    this.#buf = this.#buf.subarray(used);
    return { status, body: text ? JSON.parse(text) : undefined };
  }

  /** Everything until the server closes the connection. */
  async rest(): Promise<string> {
    await this.#until(() => (this.#closed ? true : undefined), 'the connection to close');
    return this.#buf.toString('latin1');
  }

  /** Whatever has arrived so far, after a short wait. */
  async pending(ms = 100): Promise<{ bytes: string; closed: boolean }> {
    await new Promise((r) => setTimeout(r, ms));
    return { bytes: this.#buf.toString('latin1'), closed: this.#closed };
  }
}

/** A whole HTTP answer at the start of `buf`, or undefined while more bytes are needed. */
function parseAnswer(buf: Buffer): { status: number; text: string; used: number } | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = buf.subarray(0, end).toString('latin1');
  const status = Number(head.split(' ')[1]);
  let at = end + 4;
  if (!/\r\ntransfer-encoding: *chunked/i.test(head)) {
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (buf.length < at + length) return undefined;
    return { status, text: buf.subarray(at, at + length).toString('utf8'), used: at + length };
  }
  const parts: Buffer[] = [];
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = parseInt(buf.subarray(at, eol).toString('latin1'), 16);
    if (buf.length < eol + 2 + size + 2) return undefined;
    if (size === 0) return { status, text: Buffer.concat(parts).toString('utf8'), used: eol + 4 };
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

const valueAt = (o: Json, dotted: string): unknown =>
  dotted.split('.').reduce<Json>((v, k) => (v === undefined || v === null ? undefined : v[k]), o);

/** Replays one exchange; returns the differences (empty when the sandbox agrees). */
export async function replayWire(
  serverUrl: string,
  x: WireExchange,
  skip: readonly Exception[],
): Promise<string[]> {
  const url = new URL(serverUrl);
  const socket = connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const conn = new RawConnection(socket);
  const out: string[] = [];
  try {
    for (const [i, s] of x.sends.entries()) {
      socket.write(s.send.replaceAll('<host>', url.host));
      if (s.answer) {
        const got = await conn.answer();
        out.push(...compareAnswer(s.answer, got, skip).map((d) => `send ${i}: ${d}`));
        for (const [p, want] of Object.entries(s.answer.values ?? {}))
          if (valueAt(got.body, p) !== want)
            out.push(`send ${i}: ${p} is ${JSON.stringify(valueAt(got.body, p))} instead of ${String(want)}`);
        // Go answers nothing more until the stray line ends (with the next send)
        const early = await conn.pending();
        if (early.bytes) out.push(`send ${i}: answered early ${JSON.stringify(early.bytes)}`);
      }
      if (s.raw !== undefined) {
        const raw = s.closed ? await conn.rest() : (await conn.pending(500)).bytes;
        if (raw !== s.raw) out.push(`send ${i}: ${JSON.stringify(raw)} instead of ${JSON.stringify(s.raw)}`);
      }
    }
  } finally {
    socket.destroy();
  }
  return out;
}
