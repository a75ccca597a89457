// A loopback TCP proxy in front of the API server that the soak can cut: `drop` resets every open
// connection (a dropped network), `down` also refuses new ones for a while (an API server restart,
// seen from its clients), `close` ends it for good (the agent behind it was killed: its sockets die
// with the process).
import net from 'node:net';

export interface CuttableProxy {
  readonly url: string;
  drop(): void;
  down(ms: number): void;
  close(): Promise<void>;
}

export async function startCuttableProxy(upstream: string): Promise<CuttableProxy> {
  const target = new URL(upstream);
  const sockets = new Set<net.Socket>();
  let downUntil = 0;
  const server = net.createServer((client) => {
    // refused while down: a reset as soon as the connection is accepted
    if (Date.now() < downUntil) {
      client.destroy();
      return;
    }
    const upstreamSocket = net.connect(Number(target.port), target.hostname);
    for (const s of [client, upstreamSocket]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstreamSocket.destroy();
      });
    }
    client.pipe(upstreamSocket);
    upstreamSocket.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  const drop = () => {
    for (const s of sockets) s.destroy();
  };
  return {
    url: `${target.protocol}//127.0.0.1:${port}`,
    drop,
    down(ms) {
      downUntil = Date.now() + ms;
      drop();
    },
    close: async () => {
      downUntil = Infinity;
      drop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
