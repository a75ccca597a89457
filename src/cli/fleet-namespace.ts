// Where the read-only commands look: drainer's namespace (-n/--namespace, fleet.namespace). A
// namespace the cluster lacks is bad input (one line, exit 2), never an empty fleet reported as
// healthy; one without a single agent Lease says so instead of "every node is in service".
import { ConfigError, isForbiddenError, isNotFoundError } from '../errors.ts';
import type { KubeClients } from '../kube/client.ts';

/** Throws the one line for a namespace the cluster does not have; unreadable (no rights): says nothing. */
export async function requireNamespace(
  k: KubeClients,
  namespace: string,
  signal?: AbortSignal,
): Promise<void> {
  try {
    await k.request({
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}`,
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    if (isForbiddenError(err)) return; // no right to read namespaces: the lists below speak for themselves
    if (!isNotFoundError(err)) throw err; // the cluster's first answer: its one error line
    throw new ConfigError([
      {
        path: 'fleet.namespace',
        message: `namespace ${namespace} does not exist in the cluster: drainer's agents, Leases and gates live in drainer's namespace (-n/--namespace)`,
      },
    ]);
  }
}

/** The line for a namespace where no agent holds a node Lease: nothing there observed the nodes. */
export const noAgentText = (namespace: string): string =>
  `no drainer agent found in namespace ${namespace} (no drainer-node-<node> Lease): nothing says whether the nodes are in service; is drainer installed there? (-n/--namespace names drainer's namespace)`;
