// virt-api in a network namespace the suite makes, never on the host's `lo`: the API server dials virt-api's
// Service by its ClusterIP (the kit has no kube-proxy), so that address must answer; it is put inside the
// namespace, behind a veth pair whose host end routes to it. Test traffic stays on loopback and in this
// namespace. Inside, 127.0.0.1 is the namespace's own: virt-api reaches the API server through a relay (relay.ts).
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import { apiServer } from '../context.ts';
import type { KubeVirtEnv } from '../env.ts';
import type { Kubectl } from '../kubectl.ts';
import { relay, type Relay } from './relay.ts';

/** The host end of the veth pair and its link-local address (the API server's source address to virt-api). */
export const HOST_VETH = 'kvapi-host';
export const HOST_ADDRESS = '169.254.243.1';
/** The namespace's end, holding virt-api's address. */
export const NS_VETH = 'kvapi-ns';

const RELAY_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'netns-relay.ts');

/** virt-api's IPv4 address and port from DRAINER_REAL_KUBEVIRT_API; a loopback one is refused (see below). */
export function apiAddress(api: string): { ip: string; port: number } {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d+)$/.exec(api);
  if (!m) throw new Error(`DRAINER_REAL_KUBEVIRT_API must be <IPv4>:<port>, got "${api}"`);
  const ip = m[1]!;
  // a 127.x address inside the namespace is the namespace's own: the API server could not reach it
  if (ip.startsWith('127.'))
    throw new Error(
      `DRAINER_REAL_KUBEVIRT_API ${api}: virt-api's Service address (a ClusterIP) goes inside the suite's network namespace, not on loopback`,
    );
  return { ip, port: Number(m[2]) };
}

/** The `ip` commands that make the namespace: virt-api's address on its end of a veth pair, routed from the host. */
export function netnsSetup(netns: string, apiIp: string): string[][] {
  return [
    ['netns', 'add', netns],
    ['link', 'add', HOST_VETH, 'type', 'veth', 'peer', 'name', NS_VETH, 'netns', netns],
    ['-n', netns, 'link', 'set', 'lo', 'up'],
    ['-n', netns, 'addr', 'add', `${apiIp}/32`, 'dev', NS_VETH],
    ['-n', netns, 'link', 'set', NS_VETH, 'up'],
    ['-n', netns, 'route', 'add', `${HOST_ADDRESS}/32`, 'dev', NS_VETH],
    ['addr', 'add', `${HOST_ADDRESS}/32`, 'dev', HOST_VETH],
    ['link', 'set', HOST_VETH, 'up'],
    ['route', 'add', `${apiIp}/32`, 'dev', HOST_VETH, 'src', HOST_ADDRESS],
  ];
}

const ip = (args: readonly string[]) =>
  new Promise<string>((resolve, reject) =>
    execFile('ip', args, { timeout: 30_000 }, (err, out, stderr) =>
      err ? reject(new Error(`ip ${args.join(' ')}: ${stderr.trim()}`)) : resolve(out),
    ),
  );

/** A kubeconfig for virt-api inside the namespace: the relay's 127.0.0.1, the API server's CA and name. */
export function nsKubeconfig(adminKubeconfig: string, port: string, host: string, token: string): string {
  const kc = yaml.load(readFileSync(adminKubeconfig, 'utf8')) as {
    clusters: { cluster: Record<string, string> }[];
  };
  const cluster = kc.clusters[0]!.cluster;
  const ca =
    cluster['certificate-authority-data'] ??
    readFileSync(cluster['certificate-authority']!).toString('base64');
  return yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'real',
        cluster: {
          server: `https://127.0.0.1:${port}`,
          'certificate-authority-data': ca,
          'tls-server-name': host,
        },
      },
    ],
    users: [{ name: 'virt-api', user: { token } }],
    contexts: [{ name: 'virt-api', context: { cluster: 'real', user: 'virt-api' } }],
    'current-context': 'virt-api',
  });
}

const exited = (child: ChildProcess, timeoutMs: number) =>
  new Promise<boolean>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(true);
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });

/** Runs virt-api (DRAINER_REAL_KUBEVIRT_BIN) in DRAINER_REAL_KUBEVIRT_NETNS, made here and removed by stop(). */
export class VirtApiInNetns {
  /** Where virt-api's and the relay's logs stay until the next run. */
  readonly dir = path.join(os.tmpdir(), 'drainer-real-kv');
  private hostRelay?: Relay;
  private children: ChildProcess[] = [];

  private readonly kv: KubeVirtEnv;
  private readonly k: Kubectl;
  private readonly adminKubeconfig: string;

  constructor(kv: KubeVirtEnv, k: Kubectl, adminKubeconfig: string) {
    this.kv = kv;
    this.k = k;
    this.adminKubeconfig = adminKubeconfig;
  }

  get log(): string {
    return path.join(this.dir, 'virt-api.log');
  }

  /** Makes the namespace and starts virt-api as `kubevirt-apiserver` (its RBAC must be applied already). */
  async start(): Promise<void> {
    const { ip: apiIp, port } = apiAddress(this.kv.api);
    await this.removeNetns();
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    for (const args of netnsSetup(this.kv.netns, apiIp)) await ip(args);

    const server = apiServer(this.adminKubeconfig);
    const socket = path.join(this.dir, 'apiserver.sock');
    this.hostRelay = await relay({ path: socket }, { host: server.host, port: Number(server.port) });
    this.spawnInNetns('relay.log', process.execPath, [RELAY_SCRIPT, '127.0.0.1', server.port, socket]);

    const token = (
      await this.k.ok(['create', 'token', 'kubevirt-apiserver', '-n', this.kv.namespace, '--duration=24h'])
    ).trim();
    const kubeconfig = path.join(this.dir, 'virt-api.kubeconfig');
    writeFileSync(kubeconfig, nsKubeconfig(this.adminKubeconfig, server.port, server.host, token), {
      mode: 0o600,
    });
    // the CA virt-api trusts for client certificates (virt-handler's); it reads it from this ConfigMap
    await this.k.ok(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'kubevirt-ca', namespace: this.kv.namespace },
        data: { 'ca-bundle': readFileSync(this.kv.apiCa, 'utf8') },
      }),
    });
    this.spawnInNetns('virt-api.log', path.join(this.kv.bin, 'virt-api'), [
      '--kubeconfig',
      kubeconfig,
      '--listen',
      apiIp,
      '--port',
      String(port),
      '--tls-cert-file',
      this.kv.apiCert,
      '--tls-key-file',
      this.kv.apiKey,
      // the client certificate for calls to virt-handler (consoles): none is made here, the serving one will do
      '--handler-cert-file',
      this.kv.apiCert,
      '--handler-key-file',
      this.kv.apiKey,
    ]);
  }

  /** Stops what start() ran (SIGTERM, then SIGKILL) and removes the namespace with its veth pair and route. */
  async stop(): Promise<void> {
    for (const child of this.children.reverse()) {
      child.kill('SIGTERM');
      if (!(await exited(child, 10_000))) child.kill('SIGKILL');
    }
    this.children = [];
    await this.hostRelay?.close();
    this.hostRelay = undefined;
    await this.removeNetns();
  }

  private spawnInNetns(logName: string, file: string, args: string[]): void {
    const out = openSync(path.join(this.dir, logName), 'a');
    // `ip netns exec` enters the namespace and execs the command: the child's pid is the command's
    const child = spawn('ip', ['netns', 'exec', this.kv.netns, file, ...args], {
      stdio: ['ignore', out, out],
    });
    child.on('error', () => undefined);
    this.children.push(child);
  }

  /** Removes the namespace, a stale one too (a run that was killed): first the processes still in it. */
  private async removeNetns(): Promise<void> {
    if (existsSync(path.join('/run/netns', this.kv.netns))) {
      const pids = (await ip(['netns', 'pids', this.kv.netns])).split('\n').filter(Boolean);
      for (const pid of pids) process.kill(Number(pid), 'SIGKILL');
      await ip(['netns', 'del', this.kv.netns]);
    }
    // the host end goes with the namespace's; a half-made pair may be left by a failed start
    await ip(['link', 'del', HOST_VETH]).catch(() => undefined);
  }
}
