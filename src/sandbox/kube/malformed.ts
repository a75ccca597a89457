// A request the server cannot read, answered as kube-apiserver's Go net/http answers it. Without a
// Content-Length (or chunked encoding) a request has no body, whatever its method; bytes a client
// sent as a body (Node sends none for a DELETE or GET body unless told) are the start of the next
// request. Go reads that request line only once it ends (a newline, usually the next request's),
// after answering the request before it, then writes its fixed 400 and closes the connection.
// Node's parser instead fails at once on the first stray byte, and again on every later chunk.
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const goError = (status: string) =>
  `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${status}`;

/** Go's answer to a request line it cannot parse (net/http server.go, conn.serve). */
export const GO_BAD_REQUEST = goError('400 Bad Request');
/** Go's answer to headers past MaxHeaderBytes (Node's own answer would be lost to our handler). */
const GO_HEADERS_TOO_LARGE = goError('431 Request Header Fields Too Large');

interface ParseError extends Error {
  readonly code?: string;
  readonly bytesParsed?: number;
  readonly rawPacket?: Buffer;
}

/** What the server has read of a request line that does not parse, per connection. */
interface Stray {
  line: string;
  answered: boolean;
}

/**
 * Answers unreadable requests like Go: the request in flight first, then 400 once the stray line
 * is complete. `log` is told the first 100 characters of that line.
 */
export function answerMalformedLikeGo(server: Server, log: (line: string) => void): void {
  const inFlight = new WeakMap<Socket, ServerResponse>();
  const strays = new WeakMap<Socket, Stray>();
  server.on('request', (req, res: ServerResponse) => {
    inFlight.set(req.socket, res);
    res.once('finish', () => {
      if (inFlight.get(req.socket) === res) inFlight.delete(req.socket);
    });
  });
  server.on('clientError', (err: ParseError, socket: Socket) => {
    if (err.code === 'HPE_HEADER_OVERFLOW' && socket.writable) {
      socket.end(GO_HEADERS_TOO_LARGE);
      return;
    }
    if (!err.code?.startsWith('HPE_') || !socket.writable) {
      socket.destroy(err);
      return;
    }
    const raw = err.rawPacket ?? Buffer.alloc(0);
    let stray = strays.get(socket);
    // The first error's packet holds the request before the stray bytes; later ones are all stray.
    const bytes = stray ? raw : raw.subarray(Math.min(err.bytesParsed ?? 0, raw.length));
    if (!stray) strays.set(socket, (stray = { line: '', answered: false }));
    stray.line += bytes.toString('latin1');
    const eol = stray.line.indexOf('\n');
    if (eol < 0 || stray.answered) return; // Go still waits for the line's end
    stray.answered = true;
    const line = stray.line.slice(0, eol).replace(/\r$/, '');
    const answer = () => {
      log(line.slice(0, 100));
      socket.end(GO_BAD_REQUEST);
    };
    const res = inFlight.get(socket);
    if (res && !res.writableFinished) res.once('finish', answer);
    else answer();
  });
}
