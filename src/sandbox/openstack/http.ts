// Small HTTP helpers shared by the Keystone and Nova emulations.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';

export interface Reply {
  status: number;
  body?: unknown;
  /** A non-JSON body (e.g. the HTML 404 of an unrouted path); needs a Content-Type header. */
  text?: string;
  /** Serialize as Python's json.dumps does (", " and ": " separators, ASCII only). */
  pythonJson?: boolean;
  headers?: Record<string, string | string[]>;
}

/** An error answer in an OpenStack service's own shape; thrown by handlers. */
export class HttpFault extends Error {
  readonly reply: Reply;
  constructor(reply: Reply) {
    super(`HTTP ${reply.status}`);
    this.reply = reply;
  }
}

export class BadJson extends Error {}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new BadJson('malformed body', { cause: err });
  }
}

export function requestId(): string {
  return `req-${randomUUID()}`;
}

/** Writes a reply; OpenStack's WSGI services close every connection, so do we. */
export function send(res: ServerResponse, reply: Reply): void {
  const headers: Record<string, string | string[]> = { Connection: 'close', ...reply.headers };
  let payload: string | undefined = reply.text;
  if (payload !== undefined) {
    // Content-Type comes with the reply
  } else if (reply.body !== undefined) {
    payload = reply.pythonJson ? pythonJson(reply.body) : JSON.stringify(reply.body);
    headers['Content-Type'] ??= 'application/json';
  } else if (reply.status !== 204) {
    headers['Content-Type'] ??= 'application/json';
  }
  if (reply.status !== 204) headers['Content-Length'] = String(Buffer.byteLength(payload ?? ''));
  res.writeHead(reply.status, headers);
  res.end(payload);
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Python's repr() of a JSON value, as Nova's validation messages print request bodies. */
export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (isObject(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`)
      .join(', ')}}`;
  return JSON.stringify(v) ?? 'None';
}

/** Python's str() of a JSON value (strings bare, the rest as repr). */
export function pyStr(v: unknown): string {
  return typeof v === 'string' ? v : pyRepr(v);
}

/** JSON as Python's json.dumps writes it, so byte-level comparisons with the real API hold. */
export function pythonJson(v: unknown): string {
  // Strings are matched whole, so only the separators outside them get their space.
  return (JSON.stringify(v) ?? 'null').replace(/"(?:[^"\\]|\\.)*"|[,:]/g, (m) => {
    if (m === ',' || m === ':') return `${m} `;
    // ensure_ascii
    return /[\u0080-\uffff]/.test(m)
      ? m.replace(/[\u0080-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
      : m;
  });
}
