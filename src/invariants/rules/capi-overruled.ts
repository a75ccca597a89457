// Cluster API's drain may give up (nodeDrainTimeout) and delete the Machine's node whatever is on
// it, but not while drainer's pre-drain hook holds it: Cluster API waits on the hook, which drainer
// takes off only once the node is Evacuated, and its timeout starts only then. So a Cluster API drain
// of a Machine that carried drainer's hook never gives up with VMs on the host (the soak judges each
// drain's return with this; a drain stopped by the soak's end, or given back meanwhile, says nothing).
import { violation, type Violation } from '../violation.ts';

export interface ObservedCapiDrain {
  readonly node: string;
  /** drainer's (or any) pre-drain hook was on the Machine when it was deleted. */
  readonly hooked?: boolean;
  /** The drain ended with nothing left it waits for. */
  readonly ok: boolean;
  readonly stopped?: boolean;
  readonly contradicted: boolean;
  readonly released: boolean;
  /** VMs on the host when it returned. */
  readonly occupying: readonly string[];
}

export function overruledUnderHook(d: ObservedCapiDrain): Violation | undefined {
  if (!d.hooked || d.ok || d.stopped || d.contradicted || d.released || !d.occupying.length) return undefined;
  return violation(
    'drain-overruled-under-hook',
    `node/${d.node}`,
    `Cluster API gave up draining ${d.node} (nodeDrainTimeout) although drainer's pre-drain hook was on its Machine, and deletes it with ${d.occupying.join(', ')} on the host`,
    "drainer took its hook off before the node was Evacuated, or Cluster API's timeout ran while the hook was on: a bug to file with the agent's log",
  );
}
