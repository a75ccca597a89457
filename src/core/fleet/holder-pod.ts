// Is a Lease holder's agent pod gone for good? A holder "<pod name>/<pod uid>" (the downward API's
// names) whose pod the API server no longer has, has made again under another uid, or has seen
// finish, renews no more: its node Lease, or a fleet slot it held, need not be waited out.
import type { Logger } from '../../observability/logger.ts';
import { isNotFoundError } from '../../errors.ts';
import type { KubeTransport } from '../../kube/http.ts';
import type { KubeObject } from '../../kube/types.ts';

export interface HolderPod {
  readonly uid?: string | undefined;
  readonly phase?: string | undefined;
}

/** The agent pod of that name as the API server has it (undefined: none of that name). */
export type ReadHolderPod = (name: string) => Promise<HolderPod | undefined>;

/** A pod uid (the downward API's metadata.uid), as a holder "<pod name>/<pod uid>" ends. */
const POD_UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The holder pods in the agents' namespace, read from the API server. */
export const kubeHolderPod =
  (k: KubeTransport, namespace: string): ReadHolderPod =>
  async (name) => {
    try {
      const pod = await k.request<KubeObject>({
        path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`,
      });
      return { uid: pod.metadata.uid, phase: (pod.status as { phase?: string } | undefined)?.phase };
    } catch (err) {
      if (isNotFoundError(err)) return undefined;
      throw err;
    }
  };

/**
 * Is the agent instance "<pod name>/<pod uid>" a pod the API server says is gone: no pod of its
 * name, one made again (another uid), or one whose containers have ended for good? Any doubt (not
 * a pod's instance, the pod not readable) answers no: the Lease then runs out as before. `taking`
 * names what is taken now, for the log line.
 */
export async function holderPodGone(
  instance: string,
  read: ReadHolderPod | undefined,
  log: Logger,
  taking: string,
): Promise<boolean> {
  const [name, uid, ...rest] = instance.split('/');
  if (!read || !name || !uid || rest.length || !POD_UID.test(uid)) return false;
  try {
    const pod = await read(name);
    const gone = !pod || pod.uid !== uid || pod.phase === 'Succeeded' || pod.phase === 'Failed';
    if (gone)
      log.info(
        { holder: instance, pod: pod ? (pod.uid !== uid ? 'made again' : pod.phase) : 'gone' },
        `the holder pod no longer runs: taking ${taking} now, without waiting for it to run out`,
      );
    return gone;
  } catch (err) {
    log.debug({ err, holder: instance }, 'could not read the holder pod');
    return false;
  }
}
