// core/v1 Events as virt-controller records them (the reason, and the message people read).
import type { KubeObject } from '../../kube/types.ts';
import type { StoreLike } from '../store.ts';

export function recordEvent(
  store: StoreLike,
  about: KubeObject,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
): void {
  const at = store.stamps.at();
  store.create('events', {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { generateName: `${about.metadata.name ?? 'object'}.`, namespace: about.metadata.namespace },
    involvedObject: {
      apiVersion: about.apiVersion,
      kind: about.kind,
      name: about.metadata.name,
      namespace: about.metadata.namespace,
      uid: about.metadata.uid,
    },
    type,
    reason,
    message,
    source: { component: 'virtualmachine-controller' },
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
  });
}
