// One view: a read-only command that talks to a cluster (plan, doctor, run-once --dry-run, status)
// weighs the configuration the agents run with, the ConfigMap their DaemonSet mounts
// (drainer-config-<hash>), with the local file, environment and flags over it, and says so in one
// line of its output. Its OpenStack credentials, when none are given here, come from the Secret the
// DaemonSet mounts (the agents' clouds.yaml); where that cannot be read, the one error line says
// what is missing.
import { Buffer } from 'node:buffer';
import { cloudToOpenstack, type CloudsResult } from '../config/clouds.ts';
import { loadConfig } from '../config/load.ts';
import { isPlainObject, type Layer } from '../config/merge.ts';
import type { Config } from '../config/schema.ts';
import { parseYaml } from '../config/yaml-file.ts';
import { ConfigError, isAuthError, isForbiddenError, isNotFoundError } from '../errors.ts';
import type { KubeClients } from '../kube/client.ts';
import { agentMounts, type AgentMounts } from './agent-mounts.ts';
import { flagsOf, type GlobalArgs } from './context.ts';
import { localCopy } from './mounted-file.ts';

export const CONFIG_KEY = 'config.yaml';

/** Keys that say how this command reaches the cluster, not how the agents behave: never "overrides". */
const LOCAL_ONLY = [
  'kubeconfig',
  'kubeContext',
  'fleet.namespace',
  'logLevel',
  'dryRun',
  'nodeName',
  'openstack',
];

interface ObjectWithData {
  readonly data?: Readonly<Record<string, string>>;
}

const reasonOf = (err: unknown): string => (isForbiddenError(err) ? 'forbidden' : 'unauthorized');

/** Leaf keys of a layer ("fleet.maintenanceWindows", "nova.retries"); records and lists count as one. */
function leafKeys(layer: Layer, prefix = ''): string[] {
  return Object.entries(layer).flatMap(([k, v]) => {
    const key = `${prefix}${k}`;
    if (LOCAL_ONLY.some((l) => key === l || key.startsWith(`${l}.`))) return [];
    return isPlainObject(v) && Object.keys(v).length && key !== 'nova.hostMapping'
      ? leafKeys(v, `${key}.`)
      : [key];
  });
}

async function readData(
  k: KubeClients,
  namespace: string,
  kind: 'configmaps' | 'secrets',
  name: string,
  signal: AbortSignal,
): Promise<{ data: Readonly<Record<string, string>> } | { missing: string }> {
  try {
    const o = await k.request<ObjectWithData>({
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/${kind}/${name}`,
      signal,
    });
    return { data: o.data ?? {} };
  } catch (err) {
    // not there, or not ours to read: said in the source line; a cluster that does not answer is
    // the command's one error line
    if (isNotFoundError(err)) return { missing: 'not in the cluster' };
    if (isForbiddenError(err) || isAuthError(err)) return { missing: reasonOf(err) };
    throw err;
  }
}

/** The agents' cloud from the Secret's clouds.yaml; else why not. */
async function clusterCloud(
  k: KubeClients,
  namespace: string,
  agents: AgentMounts,
  signal: AbortSignal,
): Promise<CloudsResult | { missing: string }> {
  const source = `Secret ${namespace}/${agents.secret}`;
  const got = await readData(k, namespace, 'secrets', agents.secret, signal);
  if ('missing' in got) return { missing: `${source}: ${got.missing}` };
  const text = got.data['clouds.yaml'];
  if (!text) return { missing: `${source} has no clouds.yaml` };
  const doc = parseYaml(Buffer.from(text, 'base64').toString('utf8'), `${source} clouds.yaml`);
  const clouds = isPlainObject(doc) && isPlainObject(doc.clouds) ? doc.clouds : {};
  const entry = clouds[agents.cloud];
  if (!isPlainObject(entry))
    return { missing: `${source} has no cloud "${agents.cloud}" in its clouds.yaml` };
  const openstack = cloudToOpenstack(entry);
  // a private CA the agents read from the same Secret (its key ca.pem): here, a local copy of it
  if (typeof openstack.cacert === 'string')
    openstack.cacert = localCopy(openstack.cacert, agents.secretMount, got.data);
  return { openstack, source: `${source} (cloud ${agents.cloud})` };
}

const hasNoCredential = (c: Config): boolean =>
  !Object.values(c.openstack.auth).some((v) => v !== undefined && v !== '');

/**
 * The configuration as the agents weigh it, for a command with cluster access `k`: the ConfigMap
 * under this machine's file, environment and flags. `cloud`: the command asks Nova, so credentials
 * missing here are looked for in the cluster's Secret. `said`: where it came from, for the output.
 */
export async function clusterConfig(
  argv: GlobalArgs,
  local: Config,
  k: KubeClients,
  opts: { readonly cloud: boolean },
): Promise<{ config: Config; said: string }> {
  const { io } = argv.cli;
  const ns = local.fleet.namespace;
  const agents = await agentMounts(k, ns, local.fleet.daemonSet, io.signal);
  const where = `ConfigMap ${ns}/${agents.configMap}`;
  const got = await readData(k, ns, 'configmaps', agents.configMap, io.signal);
  const text = 'data' in got ? got.data[CONFIG_KEY] : undefined;
  let overrides: string[] = [];
  const base = text === undefined ? undefined : { doc: parseYaml(text, where), source: where };
  const needCloud = opts.cloud && hasNoCredential(local);
  const cloud = needCloud ? await clusterCloud(k, ns, agents, io.signal) : undefined;
  const config = await loadConfig({
    argv: flagsOf(argv),
    env: io.env,
    cwd: io.cwd,
    homeDir: io.homeDir,
    etcDir: io.etcDir,
    ...(base ? { base } : {}),
    ...(cloud && !('missing' in cloud) ? { baseCloud: cloud } : {}),
    onLocal: (layer) => (overrides = leafKeys(layer)),
  });
  if (cloud && 'missing' in cloud && config.nova.enabled && hasNoCredential(config))
    throw new ConfigError([
      {
        path: 'openstack.auth',
        message: `no OpenStack credentials here (clouds.yaml with OS_CLOUD, OS_* variables, the config file's openstack: block), and the agents' cannot be read (${cloud.missing}): give credentials here, or the right to read that Secret; nova.enabled: false (DRAINER_NOVA_ENABLED=false) leaves Nova out`,
      },
    ]);
  const line = sourceLine(where, base !== undefined, 'missing' in got ? got.missing : undefined, overrides);
  const credentials = cloud && !('missing' in cloud) ? `; credentials: the agents' ${cloud.source}` : '';
  return { config, said: `${line}${credentials}` };
}

const SHOWN = 6;

/** "the agents' ConfigMap drainer/drainer-config; overridden here (…): nova.retries, …" (after "config: "). */
function sourceLine(where: string, read: boolean, missing: string | undefined, overrides: string[]): string {
  const over = overrides.length
    ? `; overridden here (local file, DRAINER_* or flags): ${overrides.slice(0, SHOWN).join(', ')}${overrides.length > SHOWN ? `, and ${overrides.length - SHOWN} more` : ''}`
    : '';
  if (read) return `the agents' ${where}${over}`;
  return `this machine's only (${where}: ${missing ?? `no ${CONFIG_KEY} key`}), which may not be what the agents run with`;
}
