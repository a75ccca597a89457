// The sandbox's own input errors (issue 37): a port that is not one, a port in use (its own, or the
// next one Keystone+Nova take), a state directory under a file or where none can be made (/proc:
// Node's recursive mkdir spun there at 100 % CPU, deaf to SIGTERM). Each is one line naming the
// flag, exit 2, and the process ends by itself: run as an operator runs it, its own process.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = path.resolve(import.meta.dirname, '../../src/cli.ts');
/** Long enough for a slow machine to start node; a run still going then is a hang. */
const HANG_MS = 20_000;

function sandbox(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string; hung: boolean }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-sandbox-flags-'));
  const child = spawn(process.execPath, [CLI, 'sandbox', ...args], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, HANG_MS);
  return new Promise((done) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, hung });
    }),
  );
}

async function listenOn(port: number): Promise<Server | undefined> {
  const s = createServer();
  return new Promise((done) => {
    s.once('error', () => done(undefined));
    s.listen(port, '127.0.0.1', () => done(s));
  });
}

/**
 * A port held here whose port below is free, both under the kernel's ephemeral range (32768 and up):
 * no other process is handed the free one by chance while the sandbox starts (with port 0 it was).
 */
async function listening(): Promise<Server> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const below = await listenOn(port - 1);
    if (!below) continue;
    await new Promise<void>((done) => below.close(() => done()));
    const held = await listenOn(port);
    if (held) return held;
  }
}
const portOf = (s: Server) => (s.address() as { port: number }).port;

describe('drainer sandbox: its own input errors, one line each, exit 2, no hang', () => {
  let busy: Server;
  let file: string;
  beforeAll(async () => {
    busy = await listening();
    file = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-sandbox-file-')), 'a-file');
    writeFileSync(file, 'not a directory\n');
  });
  afterAll(() => new Promise<void>((done) => busy.close(() => done())));

  const HELP = 'the Kubernetes API takes it and Keystone+Nova the next one; leave it out for free ports';
  const cases: [string, () => string[], () => string][] = [
    ['--port abc', () => ['--port', 'abc'], () => `--port: abc is not a port from 1 to 65534 (${HELP})`],
    [
      '--port out of range',
      () => ['--port', '70000'],
      () => `--port: 70000 is not a port from 1 to 65534 (${HELP})`,
    ],
    [
      '--port 65535 (its next one is no port)',
      () => ['--port', '65535'],
      () => `--port: 65535 is not a port from 1 to 65534 (${HELP})`,
    ],
    [
      '--port in use',
      () => ['--port', String(portOf(busy))],
      () => `--port: 127.0.0.1:${portOf(busy)} is in use: pick another --port (${HELP})`,
    ],
    [
      "--port whose next one (Keystone+Nova's) is in use",
      () => ['--port', String(portOf(busy) - 1)],
      () =>
        `--port: 127.0.0.1:${portOf(busy)} (Keystone+Nova take the port after --port ${portOf(busy) - 1}) is in use: pick another --port (${HELP})`,
    ],
    [
      '--state-dir under a file',
      () => ['--state-dir', path.join(file, 'state')],
      () => `--state-dir: ${path.join(file, 'state')} cannot be made: ${file} is a file, not a directory`,
    ],
    [
      '--state-dir /proc/nope',
      () => ['--state-dir', '/proc/nope'],
      () => '--state-dir: /proc/nope cannot be made (ENOENT on /proc/nope)',
    ],
  ];

  it.each(cases)(
    '%s',
    async (_name, args, line) => {
      const r = await sandbox(args());
      expect({ hung: r.hung, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        hung: false,
        code: 2,
        stdout: '',
        stderr: `error: ${line()}\n`,
      });
    },
    30_000,
  );
});
