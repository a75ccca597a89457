// `drainer release` and Cluster API: a deleted Machine waiting on drainer's pre-drain hook is waiting
// for the same thing the drain gate holds (the VMs gone), so a release takes the hook off with the
// gate, and a refused release says that the hook stays too.
import { isForbiddenError, isNotFoundError } from '../../errors.ts';
import type { KubeClients } from '../../kube/client.ts';
import { listAll } from '../../kube/watch.ts';
import type { KubeObject } from '../../kube/types.ts';
import { machinesPath, setMachineHook } from './kube-port.ts';
import { hasHook, machineKey, machineOfNode, type MachineObject } from './machine.ts';

/** The lines `drainer release` adds about the node's deleted Machine (none without one). */
export async function releaseMachineHook(o: {
  k: KubeClients;
  node: string;
  released: boolean;
}): Promise<string[]> {
  let machines: MachineObject[];
  try {
    machines = (await listAll<KubeObject>(o.k, { path: machinesPath })).items;
  } catch (err) {
    if (isNotFoundError(err) || isForbiddenError(err)) return []; // no Cluster API (or no right to see it)
    throw err;
  }
  const m = machineOfNode(machines, o.node);
  if (!m?.metadata?.deletionTimestamp || !hasHook(m)) return [];
  if (!o.released)
    return [
      `Machine ${machineKey(m)} is deleted and waits on drainer's pre-drain hook: it stays too, until the node is Evacuated or released`,
    ];
  await setMachineHook(o.k, m, false);
  return [
    `Cluster API: drainer's pre-drain hook taken off Machine ${machineKey(m)}: Cluster API drains the node and deletes it now`,
  ];
}
