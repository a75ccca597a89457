// virt-api in the real suite's own network namespace (test/real/support/kubevirt/api-netns.ts): the addresses it
// makes (never one on the host's lo), the settings it takes, and the relay that carries virt-api's requests from
// inside the namespace to the API server on the host's loopback.
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { kubevirtEnv } from '../real/support/env.ts';
import { apiAddress, HOST_ADDRESS, HOST_VETH, netnsSetup } from '../real/support/kubevirt/api-netns.ts';
import { relay, type Relay } from '../real/support/kubevirt/relay.ts';

const NETNS = 'drainer-real-kv';

describe("virt-api's network namespace", () => {
  const plan = netnsSetup(NETNS, '10.0.0.243');
  const addressesAdded = plan.filter((c) => c.includes('addr') && c.includes('add'));

  it('puts no address on lo, in the host or in the namespace', () => {
    for (const c of addressesAdded) expect(c.at(-1)).not.toBe('lo');
  });

  it("puts virt-api's address only inside the namespace, and only a link-local one on the host's veth end", () => {
    expect(addressesAdded).toEqual([
      ['-n', NETNS, 'addr', 'add', '10.0.0.243/32', 'dev', 'kvapi-ns'],
      ['addr', 'add', `${HOST_ADDRESS}/32`, 'dev', HOST_VETH],
    ]);
    expect(HOST_ADDRESS).toMatch(/^169\.254\./);
  });

  it("routes the API server's traffic for virt-api into the namespace, and the answers back", () => {
    expect(plan).toContainEqual(['route', 'add', '10.0.0.243/32', 'dev', HOST_VETH, 'src', HOST_ADDRESS]);
    expect(plan).toContainEqual(['-n', NETNS, 'route', 'add', `${HOST_ADDRESS}/32`, 'dev', 'kvapi-ns']);
    // the namespace comes first: every later command needs it
    expect(plan[0]).toEqual(['netns', 'add', NETNS]);
  });

  it('refuses a loopback or malformed virt-api address with a one-line reason', () => {
    expect(apiAddress('10.0.0.243:443')).toEqual({ ip: '10.0.0.243', port: 443 });
    expect(() => apiAddress('127.0.0.243:443')).toThrow(
      /inside the suite's network namespace, not on loopback/,
    );
    expect(() => apiAddress('virt-api:443')).toThrow(/must be <IPv4>:<port>/);
  });
});

describe('the KubeVirt settings', () => {
  const base = {
    DRAINER_REAL_KUBEVIRT: '1',
    DRAINER_REAL_KUBEVIRT_BIN: '/opt/kv',
    DRAINER_REAL_KUBEVIRT_API: '10.0.0.243:443',
    DRAINER_REAL_KUBEVIRT_API_CA: '/pki/ca.crt',
    DRAINER_REAL_KUBEVIRT_CONTROLLER: 'https://127.0.0.1:18444',
  };

  it("need virt-api's serving certificate and key, since the suite runs virt-api", () => {
    expect(() => kubevirtEnv(base)).toThrow(
      'DRAINER_REAL_KUBEVIRT=1 needs DRAINER_REAL_KUBEVIRT_API_CERT, DRAINER_REAL_KUBEVIRT_API_KEY',
    );
  });

  it('name the namespace drainer-real-kv unless told otherwise', () => {
    const full = {
      ...base,
      DRAINER_REAL_KUBEVIRT_API_CERT: '/pki/tls.crt',
      DRAINER_REAL_KUBEVIRT_API_KEY: '/k',
    };
    expect(kubevirtEnv(full)?.netns).toBe('drainer-real-kv');
    expect(kubevirtEnv({ ...full, DRAINER_REAL_KUBEVIRT_NETNS: 'kv2' })?.netns).toBe('kv2');
  });
});

describe('the relay from TCP to a UNIX socket', () => {
  const open: { close(): unknown }[] = [];
  let dir = '';
  afterEach(async () => {
    for (const o of open.splice(0)) await o.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('carries each connection both ways, byte for byte, to the socket behind it', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'relay-'));
    const socket = path.join(dir, 'api.sock');
    // the "API server": answers each line with its upper case
    const upstream = net.createServer((c) =>
      c.on('data', (d: Buffer) => c.write(d.toString().toUpperCase())),
    );
    await new Promise<void>((r) => upstream.listen(socket, r));
    open.push(upstream);
    const r: Relay = await relay({ host: '127.0.0.1', port: 0 }, { path: socket });
    open.push(r);

    const answers = await Promise.all(
      ['first', 'second'].map(
        (word) =>
          new Promise<string>((resolve, reject) => {
            const c = net.connect(r.address() as { host: string; port: number }, () => c.write(word));
            c.on('data', (d: Buffer) => {
              resolve(d.toString());
              c.end();
            });
            c.on('error', reject);
          }),
      ),
    );
    expect(answers).toEqual(['FIRST', 'SECOND']);
  });
});
