// A raw TCP server that reads requests as Go's net/http server does (kube-apiserver's HTTP/1.1 front):
// a request has a body only with Content-Length or chunked Transfer-Encoding; without either (any
// method) it has none, and the bytes after its headers start the next request on the connection. A
// request line that does not parse (an invalid method, no spaces, a bad HTTP version) is answered
// with Go's fixed 400 and the connection is closed. Each parsed request is answered 200 with `{}`.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ParsedRequest {
  readonly method: string;
  readonly target: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface GoServer {
  readonly url: string;
  /** Requests in the order they were parsed, over all connections. */
  readonly requests: ParsedRequest[];
  /** Request lines answered 400 (what Go would see as the start of a request). */
  readonly rejected: string[];
  /** Every byte each connection sent, for a test's failure message. */
  readonly raw: string[];
  close(): Promise<void>;
}

// Go's 400 for a request it cannot read (net/http server.go, conn.serve).
export const GO_BAD_REQUEST =
  'HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request';

// RFC 7230 tchar, as httpguts.ValidHeaderFieldName / Go's validMethod accept them.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

type Step =
  { kind: 'more' } | { kind: 'bad'; line: string } | { kind: 'request'; req: ParsedRequest; rest: Buffer };

function parseRequestLine(line: string): { method: string; target: string } | undefined {
  const [method, target, proto, ...extra] = line.split(' ');
  if (!method || !target || !proto || extra.length || !TOKEN.test(method)) return undefined;
  if (!/^HTTP\/\d\.\d$/.test(proto)) return undefined;
  return { method, target };
}

function chunkedBody(buf: Buffer): { body: Buffer; used: number } | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = parseInt(buf.subarray(at, eol).toString('latin1').split(';')[0] ?? '', 16);
    if (Number.isNaN(size)) throw new Error('bad chunk size');
    const start = eol + 2;
    if (size === 0) {
      const end = buf.indexOf('\r\n', start); // no trailers: the empty line
      return end < 0 ? undefined : { body: Buffer.concat(parts), used: end + 2 };
    }
    if (buf.length < start + size + 2) return undefined;
    parts.push(buf.subarray(start, start + size));
    at = start + size + 2;
  }
}

/** One step of Go's readRequest over the bytes buffered on a connection. */
function step(buf: Buffer): Step {
  const eol = buf.indexOf('\n');
  if (eol < 0) return { kind: 'more' }; // Go waits for the line's end
  const line = buf.subarray(0, eol).toString('latin1').replace(/\r$/, '');
  const start = parseRequestLine(line);
  if (!start) return { kind: 'bad', line };
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return { kind: 'more' };
  const headers: Record<string, string> = {};
  for (const h of buf
    .subarray(eol + 1, end)
    .toString('latin1')
    .split('\r\n')) {
    const colon = h.indexOf(':');
    if (colon > 0) headers[h.slice(0, colon).toLowerCase()] = h.slice(colon + 1).trim();
  }
  let rest: Buffer = buf.subarray(end + 4);
  let body: Buffer = Buffer.alloc(0);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const c = chunkedBody(rest);
    if (!c) return { kind: 'more' };
    body = c.body;
    rest = rest.subarray(c.used);
  } else if (headers['content-length'] !== undefined) {
    const n = Number(headers['content-length']);
    if (rest.length < n) return { kind: 'more' };
    body = rest.subarray(0, n);
    rest = rest.subarray(n);
  } // else: no body, whatever the method; the rest is the next request
  return { kind: 'request', req: { ...start, headers, body: body.toString('utf8') }, rest };
}

export async function startGoServer(): Promise<GoServer> {
  const requests: ParsedRequest[] = [];
  const rejected: string[] = [];
  const raw: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    const index = raw.push('') - 1;
    let buf: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      raw[index] += chunk.toString('latin1');
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const s = step(buf);
        if (s.kind === 'more') return;
        if (s.kind === 'bad') {
          rejected.push(s.line);
          socket.end(GO_BAD_REQUEST);
          return;
        }
        requests.push(s.req);
        buf = s.rest;
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    rejected,
    raw,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
