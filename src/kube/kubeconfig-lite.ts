// A kubeconfig drainer can serve without client-node: its current context names a cluster (server,
// CA, insecure-skip-tls-verify, tls-server-name) and a user with a token, a token file or a client
// certificate. Anything else (exec plugins, auth providers such as OIDC, basic auth, impersonation,
// proxies) returns undefined and the caller uses client-node's KubeConfig.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import yaml from 'js-yaml';
import { ConfigError } from '../errors.ts';
import { NodeWire, tokenFile, type NodeWireOptions } from './wire-pod.ts';

type Entry = Record<string, unknown>;

const HANDLED_USER = new Set([
  'token',
  'tokenFile',
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
]);
const HANDLED_CLUSTER = new Set([
  'server',
  'certificate-authority',
  'certificate-authority-data',
  'insecure-skip-tls-verify',
  'tls-server-name',
  'extensions',
]);

function named(list: unknown, name: unknown, field: string): Entry | undefined {
  if (!Array.isArray(list)) return undefined;
  const found = (list as Entry[]).find((e) => e && e.name === name);
  const inner = found?.[field];
  return inner && typeof inner === 'object' ? (inner as Entry) : found ? {} : undefined;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Options for a NodeWire from the kubeconfig text, or undefined when client-node is needed. */
export function liteKubeconfig(text: string, file: string): NodeWireOptions | undefined {
  let doc: Entry;
  try {
    doc = yaml.load(text) as Entry;
  } catch {
    return undefined; // client-node reports it
  }
  if (!doc || typeof doc !== 'object') return undefined;
  const context = named(doc.contexts, doc['current-context'], 'context');
  if (!context || str(context.as) !== undefined) return undefined;
  const cluster = named(doc.clusters, context.cluster, 'cluster');
  const user = named(doc.users, context.user, 'user') ?? {};
  if (!cluster || !str(cluster.server)) return undefined;
  if (Object.keys(cluster).some((k) => !HANDLED_CLUSTER.has(k))) return undefined;
  if (Object.keys(user).some((k) => !HANDLED_USER.has(k))) return undefined;

  const base = dirname(file);
  const read = (key: string, v: unknown): Buffer | undefined => {
    const p = str(v);
    if (!p) return undefined;
    const full = isAbsolute(p) ? p : join(base, p);
    try {
      return readFileSync(full);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new ConfigError([{ path: 'kubeconfig', message: `${key} ${full}: ${why}` }], { cause: err });
    }
  };
  const data = (v: unknown) => (str(v) ? Buffer.from(str(v) ?? '', 'base64') : undefined);
  const ca =
    data(cluster['certificate-authority-data']) ??
    read('certificate-authority', cluster['certificate-authority']);
  const cert =
    data(user['client-certificate-data']) ?? read('client-certificate', user['client-certificate']);
  const key = data(user['client-key-data']) ?? read('client-key', user['client-key']);
  const servername = str(cluster['tls-server-name']);
  const token = str(user.token);
  const file_ = str(user.tokenFile);
  const tokenPath = file_ ? (isAbsolute(file_) ? file_ : join(base, file_)) : undefined;
  return {
    server: str(cluster.server) ?? '',
    tls: {
      ...(ca ? { ca } : {}),
      ...(cert ? { cert } : {}),
      ...(key ? { key } : {}),
      ...(servername ? { servername } : {}),
      insecure: cluster['insecure-skip-tls-verify'] === true,
    },
    ...(token
      ? { token: () => Promise.resolve(token) }
      : tokenPath
        ? { token: tokenFile(tokenPath, undefined, undefined, 'kubeconfig') }
        : {}),
  };
}

/** A client-node-free wire for the kubeconfig file, or undefined when it needs client-node. */
export function liteKubeconfigWire(file: string): NodeWire | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined; // client-node names the missing file
  }
  const opts = liteKubeconfig(text, file);
  return opts ? new NodeWire(opts) : undefined;
}
