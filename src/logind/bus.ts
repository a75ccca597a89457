// A D-Bus connection on a UNIX socket (the system bus): SASL EXTERNAL, Hello, method calls matched to their
// replies by serial, and signals handed to listeners. No fd passing (wire.ts says why none is needed).
import { connect, type Socket } from 'node:net';
import { DrainerError } from '../errors.ts';
import {
  decodeMessage,
  encodeMessage,
  MessageType,
  messageLength,
  type DbusMessage,
  type DbusValue,
} from './wire.ts';

/** The bus refused, answered with a D-Bus error, or went away. The name is D-Bus's (e.g. org.freedesktop.DBus.Error.ServiceUnknown). */
export class BusError extends DrainerError {
  readonly dbusName: string;
  constructor(dbusName: string, message: string, options?: { cause?: unknown }) {
    super(dbusName === 'drainer.Disconnected' ? 'TRANSIENT' : 'API', message, options);
    this.dbusName = dbusName;
  }
}

export interface MethodCall {
  destination: string;
  path: string;
  interface: string;
  member: string;
  signature?: string;
  body?: DbusValue[];
}

/** What drainer needs of a bus; tests give a fake that speaks the same facts. */
export interface Bus {
  call(call: MethodCall): Promise<DbusValue[]>;
  /** Calls back for every signal the bus delivers (AddMatch decides which); returns the unsubscribe. */
  onSignal(listener: (m: DbusMessage) => void): () => void;
  /** Resolves once the connection has ended (the bus went away, or close()). */
  readonly ended: Promise<void>;
  close(): void;
}

/** Opens a connection to the bus at a UNIX socket path and says Hello. */
export async function openBus(socketPath: string, signal?: AbortSignal): Promise<Bus> {
  const socket = connect({ path: socketPath });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', (e) =>
      reject(new BusError('drainer.Disconnected', `system bus ${socketPath}: ${e.message}`, { cause: e })),
    );
  });
  await authenticate(socket, socketPath);
  const bus = new SocketBus(socket);
  signal?.addEventListener('abort', () => bus.close(), { once: true });
  await bus.call({
    destination: 'org.freedesktop.DBus',
    path: '/org/freedesktop/DBus',
    interface: 'org.freedesktop.DBus',
    member: 'Hello',
  });
  return bus;
}

/** SASL EXTERNAL: the bus knows our uid from the socket; we say it in hex ASCII. */
async function authenticate(socket: Socket, socketPath: string): Promise<void> {
  const uid = String(process.getuid?.() ?? 0);
  socket.write(`\0AUTH EXTERNAL ${Buffer.from(uid, 'ascii').toString('hex')}\r\n`);
  const line = await new Promise<string>((resolve, reject) => {
    let got = '';
    const onData = (d: Buffer) => {
      got += d.toString('latin1');
      const end = got.indexOf('\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      resolve(got.slice(0, end));
    };
    socket.on('data', onData);
    socket.once('close', () =>
      reject(new BusError('drainer.Disconnected', `system bus ${socketPath} closed during authentication`)),
    );
  });
  if (!line.startsWith('OK '))
    throw new BusError('drainer.AuthRejected', `system bus ${socketPath} refused authentication: ${line}`);
  socket.write('BEGIN\r\n');
}

class SocketBus implements Bus {
  private serial = 0;
  private pending = new Map<number, { resolve: (v: DbusValue[]) => void; reject: (e: Error) => void }>();
  private listeners = new Set<(m: DbusMessage) => void>();
  private buffered: Buffer = Buffer.alloc(0);
  readonly ended: Promise<void>;

  private readonly socket: Socket;

  constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (d: Buffer) => this.receive(d));
    this.ended = new Promise((resolve) => {
      socket.once('close', () => {
        for (const p of this.pending.values())
          p.reject(new BusError('drainer.Disconnected', 'the system bus connection ended'));
        this.pending.clear();
        resolve();
      });
    });
    socket.on('error', () => socket.destroy());
  }

  call(c: MethodCall): Promise<DbusValue[]> {
    const serial = ++this.serial;
    return new Promise((resolve, reject) => {
      if (this.socket.destroyed)
        return reject(new BusError('drainer.Disconnected', 'the system bus connection ended'));
      this.pending.set(serial, { resolve, reject });
      this.socket.write(encodeMessage({ type: MessageType.MethodCall, serial, ...c }));
    });
  }

  onSignal(listener: (m: DbusMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.socket.destroy();
  }

  private receive(d: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, d]) : d;
    for (let n = messageLength(this.buffered); n > 0; n = messageLength(this.buffered)) {
      const m = decodeMessage(this.buffered.subarray(0, n));
      this.buffered = this.buffered.subarray(n);
      this.dispatch(m);
    }
  }

  private dispatch(m: DbusMessage): void {
    if (m.type === MessageType.Signal) {
      for (const l of this.listeners) l(m);
      return;
    }
    const p = m.replySerial === undefined ? undefined : this.pending.get(m.replySerial);
    if (!p || m.replySerial === undefined) return;
    this.pending.delete(m.replySerial);
    if (m.type === MessageType.Error) {
      const text = typeof m.body?.[0] === 'string' ? m.body[0] : '';
      p.reject(new BusError(m.errorName ?? 'unknown', `${m.errorName ?? 'D-Bus error'}: ${text}`));
    } else p.resolve(m.body ?? []);
  }
}
