// node:http and node:https for the daemon's code, without an ES import: importing node:http as an ES
// module reads every export, and its WebSocket/MessageEvent getters load undici (fetch, http2,
// webstreams) into an agent that never uses them, ~6 MB RSS and ~30 ms at start under --jitless
// (bench footprint). process.getBuiltinModule returns the same module objects (nock's patches apply).
export const http = process.getBuiltinModule('node:http');
export const https = process.getBuiltinModule('node:https');

/**
 * The headers for a request body: its Content-Length, whatever the method. Node's client sends a
 * POST/PUT/PATCH body chunked but a DELETE or GET body with no length at all, and a server (Go's
 * net/http, kube-apiserver) then reads no body and parses the body's bytes as the next request on
 * the keep-alive connection, which it answers 400 and closes.
 */
export function bodyLength(body: string | undefined): Record<string, string> {
  return body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(body)) };
}
