// A pass-through proxy in front of the real Keystone that can revoke a token it hands out.
// Why revoke on issue: nova-api's keystonemiddleware caches a validated token (token_cache_time,
// 300 s by default) and does not re-check revocation, so revoking a token drainer already used is
// invisible to Nova for minutes. Revoked before its first use, the token makes the real Nova answer
// 401 on drainer's first authenticated call, which is the path a token expiring mid-run takes.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expectStatus, http, type Session } from './session.ts';

export interface KeystoneProxy {
  /** Use as auth_url (…/v3). */
  authUrl: string;
  /** Tokens issued through the proxy, in order (kept in memory only). */
  issued: string[];
  /** How many issued tokens were revoked before the client saw them. */
  revoked: number;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** `revokeFirst`: how many of the first issued tokens to revoke (with the admin session) before returning them. */
export async function startKeystoneProxy(admin: Session, revokeFirst: number): Promise<KeystoneProxy> {
  const upstream = admin.endpoint('identity').replace(/\/v3$/, '');
  const state = { issued: [] as string[], revoked: 0 };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const payload = await body(req);
      const headers = { ...req.headers };
      delete headers.host;
      delete headers['content-length'];
      const up = await http(`${upstream}${req.url ?? '/'}`, {
        method: req.method as 'GET',
        headers,
        ...(payload.length > 0 ? { body: payload } : {}),
        responseType: 'buffer',
        decompress: true,
        retry: { limit: 0 },
      });
      const token = up.headers['x-subject-token'];
      if (req.method === 'POST' && req.url?.startsWith('/v3/auth/tokens') && up.statusCode === 201 && token) {
        state.issued.push(String(token));
        if (state.revoked < revokeFirst) {
          const del = await admin.request('identity', 'DELETE', '/auth/tokens', {
            headers: { 'X-Subject-Token': String(token) },
          });
          expectStatus(del, 'revoke a token', 204);
          state.revoked += 1;
        }
      }
      const out = { ...up.headers };
      delete out['content-encoding'];
      delete out['transfer-encoding'];
      out['content-length'] = String(up.rawBody.length);
      res.writeHead(up.statusCode, out);
      res.end(up.rawBody);
    })().catch((e: unknown) => {
      res.writeHead(502).end(String((e as Error).message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    authUrl: `http://127.0.0.1:${port}/v3`,
    get issued() {
      return state.issued;
    },
    get revoked() {
      return state.revoked;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
