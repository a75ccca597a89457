// A loopback TCP proxy that counts the bytes each way: how much the daemon reads from the API
// server, measured outside both (the sandbox API server keeps no byte counter).
import net from 'node:net';

export interface CountingProxy {
  readonly url: string;
  /** Bytes sent by the upstream server to clients (what the clients read). */
  readonly bytesDown: () => number;
  /** Bytes sent by clients to the upstream server. */
  readonly bytesUp: () => number;
  readonly connections: () => number;
  close(): Promise<void>;
}

export async function startCountingProxy(upstream: string): Promise<CountingProxy> {
  const target = new URL(upstream);
  let down = 0;
  let up = 0;
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    connections++;
    const server = net.connect(Number(target.port), target.hostname);
    for (const s of [client, server]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        server.destroy();
      });
    }
    client.on('data', (b: Buffer) => (up += b.length));
    server.on('data', (b: Buffer) => (down += b.length));
    client.pipe(server);
    server.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `${target.protocol}//127.0.0.1:${port}`,
    bytesDown: () => down,
    bytesUp: () => up,
    connections: () => connections,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
