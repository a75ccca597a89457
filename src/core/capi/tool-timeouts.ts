// Reads the fleet tools' timeouts that apply to one node (timeouts.ts compares them): the node's
// Cluster API Machine's nodeDrainTimeout (its own, else its MachineSet's, else its
// MachineDeployment's template) and its Karpenter NodePool's terminationGracePeriod (the node's
// karpenter.sh/nodepool label). A tool that is not installed, or not readable, has none.
import { isForbiddenError, isNotFoundError } from '../../errors.ts';
import type { KubeClients } from '../../kube/client.ts';
import type { KubeObject } from '../../kube/types.ts';
import { listAll } from '../../kube/watch.ts';
import { machinesPath } from './kube-port.ts';
import { hasHook, machineKey, machineOfNode, MACHINE_API_VERSION, type MachineObject } from './machine.ts';
import type { Config } from '../../config/schema.ts';
import type { Plan } from '../backends/plugin.ts';
import { evacuationBound, goDurationSeconds, timeoutFindings, type ToolTimeout } from './timeouts.ts';

export const NODEPOOL_LABEL = 'karpenter.sh/nodepool';

type Templated = KubeObject & { spec?: { template?: { spec?: Record<string, unknown> } } };

async function absentAsUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isNotFoundError(err) || isForbiddenError(err)) return undefined;
    throw err;
  }
}

const templateValue = (o: Templated | undefined, key: string): string | undefined => {
  const v = o?.spec?.template?.spec?.[key];
  return typeof v === 'string' ? v : undefined;
};

const ownerOf = (
  o: { metadata?: { ownerReferences?: readonly { kind?: string; name?: string }[] } },
  kind: string,
) => o.metadata?.ownerReferences?.find((r) => r.kind === kind)?.name;

/**
 * What the agent already knows from its watches: the Node's labels (its Node watch) and the node's
 * Machine (the pre-drain hook's Machine watch, once synced; null: none), so a maintenance start
 * reads neither again. Undefined: not known, read it.
 */
export interface KnownObjects {
  readonly labels?: Record<string, string>;
  readonly machine?: MachineObject | null;
}

async function machineTimeout(
  k: KubeClients,
  node: string,
  known: MachineObject | null | undefined,
): Promise<ToolTimeout | undefined> {
  const m =
    known !== undefined
      ? (known ?? undefined)
      : machineOfNode(
          ((await absentAsUndefined(() => listAll<KubeObject>(k, { path: machinesPath })))?.items ??
            []) as MachineObject[],
          node,
        );
  if (!m) return undefined;
  const ns = m.metadata?.namespace ?? '';
  const base = (kind: string, name: string) =>
    `/apis/${MACHINE_API_VERSION}/namespaces/${encodeURIComponent(ns)}/${kind}/${encodeURIComponent(name)}`;
  let text = m.spec?.nodeDrainTimeout;
  let field = 'nodeDrainTimeout';
  const setName = ownerOf(m, 'MachineSet');
  if (text === undefined && setName) {
    const set = await absentAsUndefined(() => k.request<Templated>({ path: base('machinesets', setName) }));
    text = templateValue(set, 'nodeDrainTimeout');
    field = `nodeDrainTimeout (MachineSet ${ns}/${setName}'s template)`;
    const deployment = set ? ownerOf(set, 'MachineDeployment') : undefined;
    if (text === undefined && deployment) {
      const d = await absentAsUndefined(() =>
        k.request<Templated>({ path: base('machinedeployments', deployment) }),
      );
      text = templateValue(d, 'nodeDrainTimeout');
      field = `nodeDrainTimeout (MachineDeployment ${ns}/${deployment}'s template)`;
    }
  }
  const seconds = goDurationSeconds(text);
  if (seconds === undefined) return undefined;
  return { tool: 'Cluster API', object: `Machine ${machineKey(m)}`, field, seconds, hooked: hasHook(m) };
}

async function nodePoolTimeout(
  k: KubeClients,
  labels: Record<string, string>,
): Promise<ToolTimeout | undefined> {
  const name = labels[NODEPOOL_LABEL];
  if (!name) return undefined;
  const pool = await absentAsUndefined(() =>
    k.request<Templated>({ path: `/apis/karpenter.sh/v1/nodepools/${encodeURIComponent(name)}` }),
  );
  const seconds = goDurationSeconds(templateValue(pool, 'terminationGracePeriod'));
  if (seconds === undefined) return undefined;
  return { tool: 'Karpenter', object: `NodePool ${name}`, field: 'terminationGracePeriod', seconds };
}

/** The timeouts of the fleet tools that would drain this node. */
export async function toolTimeouts(
  k: KubeClients,
  node: { name: string; labels?: Record<string, string>; machine?: MachineObject | null },
): Promise<ToolTimeout[]> {
  const found = await Promise.all([
    machineTimeout(k, node.name, node.machine),
    nodePoolTimeout(k, node.labels ?? {}),
  ]);
  return found.filter((t): t is ToolTimeout => t !== undefined);
}

/**
 * `drainer plan`'s and a maintenance start's warnings: each fleet tool whose timeout is shorter than
 * the node's evacuation may take, in one line with what to change.
 */
export async function timeoutWarnings(
  k: KubeClients,
  node: string,
  plans: readonly Plan[] | (() => Promise<readonly Plan[]>),
  config: Config,
  known: KnownObjects = {},
): Promise<string[]> {
  const labels =
    known.labels ??
    (
      await absentAsUndefined(() =>
        k.request<KubeObject>({ path: `/api/v1/nodes/${encodeURIComponent(node)}` }),
      )
    )?.metadata.labels;
  if (!labels) return [];
  const timeouts = await toolTimeouts(k, {
    name: node,
    labels,
    ...(known.machine !== undefined ? { machine: known.machine } : {}),
  });
  // the node is planned only when some tool has a timeout to compare (an agent plans for this alone)
  if (!timeouts.some((t) => t.seconds > 0 && !t.hooked)) return [];
  const bound = evacuationBound(typeof plans === 'function' ? await plans() : plans, config);
  return timeoutFindings(bound, timeouts);
}
