// A fake system bus with logind on it, on a UNIX socket, speaking the real wire: SASL EXTERNAL, Hello,
// AddMatch, Properties.Get(InhibitDelayMaxUSec) as a variant 't', and PrepareForShutdown(b) sent only to
// connections that asked for it with AddMatch (dbus-daemon delivers broadcast signals only on a match).
// Without logind (login1: false) a call to it is answered ServiceUnknown, as dbus-daemon answers.
import { createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  decodeMessage,
  encodeMessage,
  MessageType,
  messageLength,
  type DbusMessage,
} from '../../src/logind/wire.ts';

export interface FakeLogind {
  socketPath: string;
  prepareForShutdown(active: boolean): void;
  inhibitDelayMaxUSec: bigint;
  close(): Promise<void>;
}

export async function startFakeLogind(
  o: { login1?: boolean; inhibitDelayMaxUSec?: bigint } = {},
): Promise<FakeLogind> {
  const socketPath = join(mkdtempSync(join(tmpdir(), 'fake-bus-')), 'system_bus_socket');
  const matched = new Set<Socket>();
  let serial = 1000;
  const fake: FakeLogind = {
    socketPath,
    inhibitDelayMaxUSec: o.inhibitDelayMaxUSec ?? 5_000_000n,
    prepareForShutdown(active) {
      const m = encodeMessage({
        type: MessageType.Signal,
        serial: ++serial,
        path: '/org/freedesktop/login1',
        interface: 'org.freedesktop.login1.Manager',
        member: 'PrepareForShutdown',
        sender: ':1.2',
        signature: 'b',
        body: [active],
      });
      for (const s of matched) s.write(m);
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
  const reply = (s: Socket, to: DbusMessage, signature?: string, body?: DbusMessage['body']) =>
    s.write(
      encodeMessage({
        type: MessageType.MethodReturn,
        serial: ++serial,
        replySerial: to.serial,
        sender: 'org.freedesktop.DBus',
        signature,
        body,
      }),
    );
  const error = (s: Socket, to: DbusMessage, name: string, text: string) =>
    s.write(
      encodeMessage({
        type: MessageType.Error,
        serial: ++serial,
        replySerial: to.serial,
        errorName: name,
        signature: 's',
        body: [text],
      }),
    );
  const answer = (s: Socket, m: DbusMessage) => {
    if (m.member === 'Hello') return reply(s, m, 's', [':1.99']);
    if (m.member === 'AddMatch') {
      if ((m.body?.[0] as string).includes("member='PrepareForShutdown'")) matched.add(s);
      return reply(s, m);
    }
    if (m.destination === 'org.freedesktop.login1' && o.login1 === false)
      return error(
        s,
        m,
        'org.freedesktop.DBus.Error.ServiceUnknown',
        'The name org.freedesktop.login1 was not provided by any .service files',
      );
    if (m.member === 'Get' && m.body?.[1] === 'InhibitDelayMaxUSec')
      return reply(s, m, 'v', [{ signature: 't', value: fake.inhibitDelayMaxUSec }]);
    return error(s, m, 'org.freedesktop.DBus.Error.UnknownMethod', `no ${m.member}`);
  };
  const server: Server = createServer((s) => {
    let authed = false;
    let buf = Buffer.alloc(0);
    s.on('close', () => matched.delete(s));
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!authed) {
        const text = buf.toString('latin1');
        if (text.includes('AUTH EXTERNAL') && !text.includes('BEGIN\r\n')) {
          if (text.endsWith('\r\n') && !text.includes('OK'))
            s.write('OK 0123456789abcdef0123456789abcdef\r\n');
          return;
        }
        const begin = text.indexOf('BEGIN\r\n');
        if (begin < 0) return;
        authed = true;
        buf = buf.subarray(begin + 7);
      }
      for (let n = messageLength(buf); n > 0; n = messageLength(buf)) {
        const m = decodeMessage(buf.subarray(0, n));
        buf = buf.subarray(n);
        if (m.type === MessageType.MethodCall) answer(s, m);
      }
    });
  });
  await new Promise<void>((r) => server.listen(socketPath, () => r()));
  return fake;
}
