// Preloaded into a daemon under test (node --import): one JSON line per HTTP client request, with
// its start and end on the epoch clock (ms, sub-ms precision), to the file in DRAINER_BENCH_TRACE.
// The daemon's requests go through node:http(s), which publishes these diagnostics channels.
import { subscribe } from 'node:diagnostics_channel';
import { appendFile } from 'node:fs/promises';
import type { ClientRequest, IncomingMessage } from 'node:http';

const file = process.env.DRAINER_BENCH_TRACE;
const now = () => performance.timeOrigin + performance.now();
const started = new WeakMap<ClientRequest, number>();
// lines go out from the thread pool, one write at a time and in order, to keep the daemon's own
// event loop (whose reaction is measured) almost free of the tracing
let pending = '';
let writing = false;
async function flush(): Promise<void> {
  if (writing) return;
  writing = true;
  while (pending) {
    const chunk = pending;
    pending = '';
    await appendFile(file as string, chunk);
  }
  writing = false;
}

if (file) {
  subscribe('http.client.request.start', (m) => {
    started.set((m as { request: ClientRequest }).request, now());
  });
  const done = (request: ClientRequest, status: number): void => {
    const start = started.get(request);
    if (start === undefined) return;
    started.delete(request);
    const line = {
      method: request.method,
      path: request.path,
      host: request.host,
      start,
      end: now(),
      status,
    };
    pending += `${JSON.stringify(line)}\n`;
    void flush();
  };
  subscribe('http.client.response.finish', (m) => {
    const { request, response } = m as { request: ClientRequest; response: IncomingMessage };
    done(request, response.statusCode ?? 0);
  });
  subscribe('http.client.request.error', (m) => done((m as { request: ClientRequest }).request, 0));
}
