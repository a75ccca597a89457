// A byte relay: each connection accepted on one socket is piped to a new connection to another. virt-api runs in a
// network namespace of its own, where 127.0.0.1 is not the host's and the kit's API server listens on the host's
// 127.0.0.1 only; a UNIX socket is a file, seen from both namespaces. So the suite listens on a UNIX socket in
// the host's namespace (to the API server), and netns-relay.ts, run inside virt-api's namespace, listens on
// that namespace's 127.0.0.1 (to the UNIX socket). TLS passes through untouched: the API server's certificate,
// which names 127.0.0.1, is still the one virt-api checks.
import net from 'node:net';

/** Where to listen or connect: a TCP host and port, or a UNIX socket's path. */
export type Endpoint = { host: string; port: number } | { path: string };

export interface Relay {
  /** Where it listens (the port chosen for port 0). */
  address(): Endpoint;
  close(): Promise<void>;
}

/** Listens on `from` and pipes every connection to a new one to `to`; resolves once listening. */
export function relay(from: Endpoint, to: Endpoint): Promise<Relay> {
  const open = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(to);
    for (const s of [inbound, outbound]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      // either side's error or end closes both: the client retries on a new connection
      s.on('error', () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(from, () =>
      resolve({
        address: () => {
          const a = server.address();
          return typeof a === 'string' || a === null
            ? { path: String(a) }
            : { host: a.address, port: a.port };
        },
        close: () =>
          new Promise<void>((done) => {
            for (const s of open) s.destroy();
            server.close(() => done());
          }),
      }),
    );
  });
}
