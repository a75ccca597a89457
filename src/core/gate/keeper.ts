// The agent's side of its node's drain gate: a watch of the gate pods and PDB (drainer's namespace,
// this node's label only) that makes the gate look again at every change, a sweep for the gates of
// deleted nodes (litter.ts), and the end of the gate at an uninstall: when the agent stops and its
// DaemonSet is gone or being deleted, the gate pod's finalizer goes, so nothing is left that blocks
// a drain.
import type { KubeClients } from '../../kube/client.ts';
import { sleep, type BackoffOptions } from '../../kube/backoff.ts';
import { gateSelector, pdbsPath, podsPath } from '../../kube/gate.ts';
import { runWatch } from '../../kube/watch.ts';
import type { Logger } from '../../observability/logger.ts';
import type { DrainGate } from './gate.ts';
import { sweepGateLitter } from './litter.ts';

export interface GateKeeperOptions {
  readonly k: KubeClients;
  readonly namespace: string;
  readonly nodeName: string;
  readonly gate: DrainGate;
  /** Is drainer being uninstalled (its DaemonSet gone or being deleted since the agent started)? */
  readonly uninstalled: () => Promise<boolean>;
  readonly log: Logger;
  readonly backoff?: BackoffOptions | undefined;
  /** How often the gates of deleted nodes are looked for (first at start; default 1 h). */
  readonly litterEveryMs?: number;
  /**
   * At stop, a DaemonSet found gone is looked for again after this long (ms, default 2 s): `kubectl
   * replace --force` deletes it and makes its successor a moment later, and that is no uninstall.
   */
  readonly successorWaitMs?: number;
}

export interface GateKeeper {
  watch(signal: AbortSignal): Promise<void>;
  atStop(): Promise<void>;
}

/** The gate watches' server-side timeout: each re-opens once per this many seconds. */
export const GATE_WATCH_SECONDS = 1800;

/** Looks for the gates of deleted nodes at start, then every litterEveryMs. */
async function sweepLoop(o: GateKeeperOptions, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    await sweepGateLitter({ k: o.k, namespace: o.namespace, nodeName: o.nodeName, log: o.log, signal }).catch(
      (err: unknown) => {
        if (!signal.aborted) o.log.warn({ err }, 'could not look for the drain gates of deleted nodes');
      },
    );
    await sleep(o.litterEveryMs ?? 3_600_000, signal).catch(() => undefined);
  }
}

export function gateKeeper(o: GateKeeperOptions): GateKeeper {
  const heal = () => o.gate.heal(o.nodeName);
  return {
    async watch(signal) {
      // reads the DaemonSet as it is at start: a stop can then tell an uninstall from a restart
      await o
        .uninstalled()
        .catch((err: unknown) => o.log.debug({ err }, 'agent DaemonSet not read at start'));
      const common = {
        k: o.k,
        log: o.log,
        signal,
        query: { labelSelector: gateSelector(o.nodeName) },
        onEvent: heal,
        // long watches: the gate costs a node two re-opens per half hour while idle
        timeoutSeconds: GATE_WATCH_SECONDS,
        ...(o.backoff ? { backoff: o.backoff } : {}),
      };
      await Promise.all([
        runWatch({ ...common, path: podsPath(o.namespace) }),
        runWatch({ ...common, path: pdbsPath(o.namespace) }),
        sweepLoop(o, signal),
      ]);
    },
    async atStop() {
      o.gate.stop();
      try {
        if (!(await o.uninstalled())) return;
        await sleep(o.successorWaitMs ?? 2_000);
        if (!(await o.uninstalled())) return;
        await o.gate.set(o.nodeName, false);
        o.log.warn(
          { node: o.nodeName },
          'drainer is being uninstalled (its DaemonSet is gone): the drain gate is released',
        );
      } catch (err) {
        o.log.warn({ err }, 'could not check for an uninstall at stop: the gate stays as it is');
      }
    },
  };
}
