// Story: a new operator points drainer at the wrong place. Each command, against an endpoint that
// refuses the connection, one that accepts and never answers, one that does not speak TLS, and one
// that answers 401 or 403, prints one line on stderr (the cause and a hint, no stack, no JSON log
// line) and exits with its documented code: 1 could not find out, 2 bad input (credentials, rights).
// The servers run on 127.0.0.1 in this test.
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { buildPlugins } from '../../src/plugins/registry.ts';
import { createNovaPlugin } from '../../src/plugins/nova/index.ts';
import { createKubeClients } from '../../src/kube/client.ts';
import { Capture } from './harness.ts';

type Kind = 'refused' | 'silent' | 'tls' | 'unauthorized' | 'forbidden';
const servers: net.Server[] = [];
const ports = {} as Record<Kind, number>;

function listen(onSocket: (s: net.Socket) => void): Promise<number> {
  const server = net.createServer((s) => {
    s.on('error', () => {});
    onSocket(s);
  });
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
}

beforeAll(async () => {
  ports.silent = await listen(() => {}); // accepts, never answers
  ports.tls = await listen((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\nnot TLS')); // plain text where TLS is expected
  // answers every request with 401 or 403 (a Keystone that refuses the password, an API server the token)
  ports.unauthorized = await listen((s) => s.once('data', () => s.end(answer(401, 'Unauthorized'))));
  ports.forbidden = await listen((s) => s.once('data', () => s.end(answer(403, 'Forbidden'))));
  // a port nobody listens on: taken and given back last, so none of the servers above can get it
  // (fetch refuses privileged ports such as 1 itself, so a free one it must be)
  const gone = net.createServer();
  await new Promise<void>((r) => gone.listen(0, '127.0.0.1', () => r()));
  ports.refused = (gone.address() as net.AddressInfo).port;
  await new Promise((r) => gone.close(r));
});

function answer(code: number, reason: string): string {
  const body = JSON.stringify({ kind: 'Status', status: 'Failure', reason, code, message: reason });
  return `HTTP/1.1 ${code} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`;
}
afterAll(() => {
  for (const s of servers) s.close();
});

const url = (kind: Kind, suffix = '') =>
  `${kind === 'tls' ? 'https' : 'http'}://127.0.0.1:${ports[kind]}${suffix}`;

async function run(files: (cwd: string) => Record<string, string>, argv: string[]) {
  const cwd = mkdtempSync(path.join(tmpdir(), 'drainer-unreachable-'));
  for (const [name, text] of Object.entries(files(cwd))) writeFileSync(path.join(cwd, name), text);
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(argv, {
    io: {
      stdout,
      stderr,
      env: {},
      cwd,
      homeDir: cwd,
      etcDir: cwd,
      hostname: () => 'node-1',
      signal: new AbortController().signal,
    },
    // the real registry and Nova plugin, without HTTP retries: one attempt says it all
    deps: {
      buildPlugins: (config, deps) =>
        buildPlugins(config, {
          ...deps,
          factories: { nova: (d) => createNovaPlugin({ ...d, httpRetries: 0 }) },
        }),
    },
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const openstackConfig = (kind: Kind) =>
  yaml.dump({
    kubevirt: { enabled: false },
    openstack: {
      requestTimeout: 0.5,
      auth: {
        authUrl: url(kind, '/v3'),
        username: 'u',
        password: 'p',
        projectName: 'x',
        userDomainName: 'Default',
        projectDomainName: 'Default',
      },
    },
  });

const kubeconfig = (kind: Kind) =>
  yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: url(kind) } }],
    users: [{ name: 'u', user: { token: 'not-a-real-token' } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  });

const causes: Record<Kind, RegExp> = {
  refused: /connection refused \(hint: /,
  silent: /no answer within 500 ms \(hint: the service accepted the connection and did not answer/,
  tls: /TLS failed: \w+ \(hint: is it an https endpoint\?/,
  unauthorized:
    /(401: credentials rejected|401 Unauthorized: Unauthorized \(hint: the API server refused the credentials)/,
  forbidden:
    /(403: admin rights needed|403 Forbidden: Forbidden \(hint: drainer's ServiceAccount lacks this right)/,
};

/** The documented exit code: bad input (2) for refused credentials or rights, else 1 (could not find out). */
const exitFor = (kind: Kind): number => (kind === 'unauthorized' || kind === 'forbidden' ? 2 : 1);

function expectOneLine(r: { code: number; stderr: string }, cause: RegExp, code: number) {
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[0]).toMatch(cause);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toContain('{"level"');
  expect(r.code).toBe(code);
}

const KINDS = ['refused', 'silent', 'tls', 'unauthorized', 'forbidden'] as const;

describe.each(KINDS)('Keystone %s', (kind) => {
  it.each(['plan', 'run-once'])(
    '%s: one line with the cause and a hint, the documented exit code',
    async (command) => {
      const r = await run(() => ({ 'config.yaml': openstackConfig(kind) }), [command, '--node', 'node-1']);
      expectOneLine(r, causes[kind], exitFor(kind));
      expect(r.stderr).toMatch(/keystone POST \S*\/v3\/auth\/tokens/);
    },
  );
});

describe.each(KINDS)('Kubernetes API %s', (kind) => {
  it.each(['status', 'plan', 'run-once', 'restore'])(
    '%s: one line with the cause and a hint, the documented exit code',
    async (command) => {
      const files = (cwd: string) => ({
        kubeconfig: kubeconfig(kind),
        'config.yaml': yaml.dump({
          kubeconfig: path.join(cwd, 'kubeconfig'),
          kubeRequestTimeout: 0.5,
          nova: { enabled: false },
        }),
      });
      const r = await run(files, [command, '--node', 'node-1']);
      expectOneLine(r, causes[kind], exitFor(kind));
      // the first request that failed: status and plan look at drainer's namespace (and its
      // ConfigMap) first, run-once and restore at the Node
      expect(r.stderr).toMatch(/kubernetes GET \/api\/v1\/(nodes|namespaces\/drainer)/);
    },
  );
});

describe('a Kubernetes request that waits', () => {
  it('says what it waits for once the answer is late (the CLI prints it on stderr)', async () => {
    const said: string[] = [];
    const ac = new AbortController();
    const k = createKubeClients({
      kubeconfigYaml: kubeconfig('silent'),
      http: {
        timeoutMs: 60_000,
        slowMs: 20,
        onSlow: (text) => {
          said.push(text);
          ac.abort(new Error('seen'));
        },
      },
    });
    await expect(k.request({ path: '/api/v1/nodes', signal: ac.signal })).rejects.toThrow('seen');
    expect(said).toEqual([
      'waiting for kubernetes GET /api/v1/nodes: no answer for 20 ms (gives up after 60 s)',
    ]);
  });
});
