// Which ConfigMap and Secret the agents run with: the ones their DaemonSet mounts. kustomize's
// generators give them hashed names (drainer-config-<hash>, so that a changed setting rolls the
// agents), and an upgrade leaves the old ones behind: a fixed name would read a stale copy. Where the
// DaemonSet cannot be read (not there, no right) the stock names stand.
import { isAuthError, isForbiddenError, isNotFoundError } from '../errors.ts';
import type { KubeClients } from '../kube/client.ts';

/** The stock install's names (daemonset/kustomization.yaml's generator, the Secret the DaemonSet mounts). */
export const CONFIG_MAP = 'drainer-config';
export const OPENSTACK_SECRET = 'drainer-openstack';
/** The DaemonSet's OS_CLOUD. */
export const AGENT_CLOUD = 'drainer';

export interface AgentMounts {
  readonly configMap: string;
  readonly secret: string;
  /** Where the agents see the Secret's keys as files (its clouds.yaml's `cacert` may name one). */
  readonly secretMount: string;
  readonly cloud: string;
}

interface Volume {
  name?: string;
  configMap?: { name?: string };
  secret?: { secretName?: string };
}
interface Container {
  args?: string[];
  env?: { name?: string; value?: string }[];
  volumeMounts?: { name?: string; mountPath?: string }[];
}
interface DaemonSet {
  spec?: { template?: { spec?: { containers?: Container[]; volumes?: Volume[] } } };
}

const STOCK: AgentMounts = {
  configMap: CONFIG_MAP,
  secret: OPENSTACK_SECRET,
  secretMount: '/etc/openstack',
  cloud: AGENT_CLOUD,
};

/** The value after `flag` in args ("--config-path", "/etc/drainer/config.yaml"), or of `flag=value`. */
function argOf(args: readonly string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  if (i >= 0) return args[i + 1];
  return args.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
}

/** The volume mounted where `file` lives (the longest mount path that holds it), and that path. */
function volumeHolding(
  c: Container,
  volumes: readonly Volume[],
  file: string | undefined,
): (Volume & { at: string }) | undefined {
  if (!file) return undefined;
  const mounts = (c.volumeMounts ?? []).filter(
    (m) => m.mountPath && file.startsWith(`${m.mountPath.replace(/\/$/, '')}/`),
  );
  const best = mounts.sort((a, b) => (b.mountPath?.length ?? 0) - (a.mountPath?.length ?? 0))[0];
  const volume = volumes.find((v) => v.name === best?.name);
  return volume && best?.mountPath ? { ...volume, at: best.mountPath.replace(/\/$/, '') } : undefined;
}

/** The names the DaemonSet's pod template gives; each one it does not say stays the stock one. */
export function mountsOf(ds: DaemonSet): AgentMounts {
  const pod = ds.spec?.template?.spec;
  const volumes = pod?.volumes ?? [];
  const c =
    pod?.containers?.find((x) => x.args?.some((a) => a.startsWith('--config-path'))) ?? pod?.containers?.[0];
  if (!c) return STOCK;
  const env = (name: string) => c.env?.find((e) => e.name === name)?.value;
  const configMap = volumeHolding(c, volumes, argOf(c.args ?? [], '--config-path'))?.configMap?.name;
  const openstack = volumeHolding(c, volumes, env('OS_CLIENT_CONFIG_FILE'));
  const secret = openstack?.secret?.secretName;
  const cloud = env('OS_CLOUD');
  return {
    configMap: configMap ?? STOCK.configMap,
    ...(secret && openstack
      ? { secret, secretMount: openstack.at }
      : { secret: STOCK.secret, secretMount: STOCK.secretMount }),
    cloud: cloud ?? STOCK.cloud,
  };
}

/** The agents' ConfigMap, Secret and cloud, from their DaemonSet `name` in `namespace`. */
export async function agentMounts(
  k: KubeClients,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<AgentMounts> {
  try {
    const ds = await k.request<DaemonSet>({
      path: `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/daemonsets/${encodeURIComponent(name)}`,
      signal,
    });
    return mountsOf(ds);
  } catch (err) {
    // no DaemonSet to ask (not installed, or not ours to read): the stock names, and the reads of
    // those say what is missing
    if (isNotFoundError(err) || isForbiddenError(err) || isAuthError(err)) return STOCK;
    throw err;
  }
}
