// A medik8s NodeMaintenance on the real cluster, as an operator (or NMO's users) create it, and the waits
// the cases share: its status Succeeded, and gone once drainer removed its finalizer.
import { waitFor } from '../../functional/support/wait.ts';
import type { Real } from './context.ts';
import type { Obj } from './kubectl.ts';

export async function createNodeMaintenance(r: Real, name: string, reason: string): Promise<void> {
  const nm = {
    apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
    kind: 'NodeMaintenance',
    metadata: { name },
    spec: { nodeName: r.env.node, reason },
  };
  await r.k.ok(['create', '-f', '-'], { input: JSON.stringify(nm) });
}

export function waitSucceeded(r: Real, name: string): Promise<Obj> {
  return waitFor(
    async () => {
      const o = await r.k.get(['nodemaintenance', name]);
      return o?.status?.phase === 'Succeeded' ? o : undefined;
    },
    { what: `NodeMaintenance ${name} Succeeded`, timeoutMs: 300_000 },
  );
}

export async function deleteAndWaitGone(r: Real, name: string): Promise<void> {
  await r.k.run(['delete', 'nodemaintenance', name, '--wait=false']);
  await waitFor(async () => ((await r.k.get(['nodemaintenance', name])) ? undefined : true), {
    what: `NodeMaintenance ${name} gone (drainer removes its finalizer after the restore)`,
    timeoutMs: 180_000,
  });
}
