// The fleet stories' world: for each test, the sandbox API server with the drainer namespace and
// these Nodes; after it, every slot the test kept is abandoned and its fleet stopped.
import { afterEach, beforeEach } from 'vitest';
import { kubeFleetApi } from '../../src/core/fleet/kube-port.ts';
import type { Slot } from '../../src/core/fleet/types.ts';
import { startFleetFixture, type KubeFixture } from '../kube/sandbox.ts';
import { quietLogger } from './fakes.ts';

export interface FleetWorld {
  readonly fx: KubeFixture;
  /** Aborted after the test: the fleet's signal. */
  readonly stop: AbortController;
  /** Slots the test holds; abandoned after it (they renew no more). */
  readonly held: Slot[];
  /** The fleet port as an agent wires it (namespace drainer, DaemonSet drainer); its slots unless told. */
  readonly api: (component?: string) => ReturnType<typeof kubeFleetApi>;
  /** The holder of a Lease in namespace drainer, or undefined (no Lease, or nobody). */
  readonly holderOf: (name: string) => string | undefined;
}

export function fleetWorld(nodes: readonly string[]): FleetWorld {
  let fx: KubeFixture | undefined;
  let stop = new AbortController();
  const held: Slot[] = [];
  beforeEach(async () => {
    stop = new AbortController();
    fx = await startFleetFixture(nodes);
  });
  afterEach(async () => {
    for (const s of held.splice(0)) s.abandon();
    stop.abort();
    await fx?.close();
  });
  const started = (): KubeFixture => {
    if (!fx) throw new Error('the fleet world starts before each test');
    return fx;
  };
  return {
    get fx() {
      return started();
    },
    get stop() {
      return stop;
    },
    held,
    api: () =>
      kubeFleetApi({ k: started().k, namespace: 'drainer', daemonSet: 'drainer', log: quietLogger() }),
    holderOf: (name) =>
      (
        started().server.store.find('leases.coordination.k8s.io', 'drainer', name) as
          { spec?: { holderIdentity?: string } } | undefined
      )?.spec?.holderIdentity,
  };
}
