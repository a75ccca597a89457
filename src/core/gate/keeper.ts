// The agent's side of its node's drain gate: a watch of the gate pods and PDB (drainer's namespace,
// this node's label only) that makes the gate look again at every change, a sweep for the gates of
// deleted nodes (litter.ts), and the end of the gate at an uninstall: when the agent stops and its
// DaemonSet is gone or being deleted, the gate pod's finalizer goes, so nothing is left that blocks
// a drain. An agent that stops with no successor coming to its node drops its gate too, once nothing
// is left there to protect.
import type { KubeClients } from '../../kube/client.ts';
import { sleep, type BackoffOptions } from '../../kube/backoff.ts';
import { gateSelector, pdbsPath, podsPath } from '../../kube/gate.ts';
import { runWatch } from '../../kube/watch.ts';
import type { Logger } from '../../observability/logger.ts';
import type { DrainGate } from './gate.ts';
import { kubeFleetApi } from '../fleet/kube-port.ts';
import { sweepGateLitter } from './litter.ts';
import { takeSweepTurn } from './litter-turn.ts';
import { anyLeft, remainingText, type Remaining } from './remaining.ts';

export interface GateKeeperOptions {
  readonly k: KubeClients;
  readonly namespace: string;
  readonly nodeName: string;
  /** This agent instance: the holder it writes when it takes the fleet's sweep turn. */
  readonly instance?: string;
  readonly gate: DrainGate;
  /** Is drainer being uninstalled (its DaemonSet gone or being deleted since the agent started)? */
  readonly uninstalled: () => Promise<boolean>;
  readonly log: Logger;
  readonly backoff?: BackoffOptions | undefined;
  /** How often the fleet looks for the gates of deleted nodes (one agent a period; default 1 h). */
  readonly litterEveryMs?: number;
  /**
   * At stop, a DaemonSet found gone is looked for again after this long (ms, default 2 s): `kubectl
   * replace --force` deletes it and makes its successor a moment later, and that is no uninstall.
   */
  readonly successorWaitMs?: number;
  /** Will an agent run on this node after this one (the agent DaemonSet still places one here)? */
  readonly successorExpected?: () => Promise<boolean>;
  /** Removes this node's gate whole (pods, PDB). */
  readonly drop?: () => Promise<void>;
  /** What the plugins find on the node's host now (asked only when no successor is expected). */
  readonly leftOnNode?: () => Promise<Remaining>;
  /** No successor will come: the agent ends what only it would go on with (its record's Evacuating). */
  readonly noSuccessor?: () => Promise<void>;
}

export interface GateKeeper {
  watch(signal: AbortSignal): Promise<void>;
  atStop(): Promise<void>;
}

/** The gate watches' server-side timeout: each re-opens once per this many seconds. */
export const GATE_WATCH_SECONDS = 1800;

/**
 * Sweeps the gates of deleted nodes when it is this agent's turn (at start if the last sweep is a
 * period old), and looks again when the next one is due, a random tenth of a period later so that
 * the fleet does not ask at the same second.
 */
async function sweepLoop(o: GateKeeperOptions, signal: AbortSignal): Promise<void> {
  const everyMs = o.litterEveryMs ?? 3_600_000;
  const api = kubeFleetApi({
    k: o.k,
    namespace: o.namespace,
    daemonSet: '',
    log: o.log,
    component: 'gate-sweep',
  });
  const instance = o.instance ?? o.nodeName;
  while (!signal.aborted) {
    let dueAt = Date.now() + everyMs;
    try {
      const turn = await takeSweepTurn(api, { instance, everyMs, now: new Date() });
      dueAt = turn.dueAt;
      if (turn.ours)
        await sweepGateLitter({ k: o.k, namespace: o.namespace, nodeName: o.nodeName, log: o.log, signal });
    } catch (err) {
      if (!signal.aborted) o.log.warn({ err }, 'could not look for the drain gates of deleted nodes');
    }
    const waitMs = Math.max(0, dueAt - Date.now()) + Math.random() * everyMs * 0.1;
    await sleep(waitMs, signal).catch(() => undefined);
  }
}

/** True, and true again a moment later: a DaemonSet replaced (`replace --force`) is no change. */
async function stillSo(o: GateKeeperOptions, check: () => Promise<boolean>): Promise<boolean> {
  if (!(await check())) return false;
  await sleep(o.successorWaitMs ?? 2_000);
  return check();
}

/**
 * No gate without a keeper: an agent that stops for good (no DaemonSet places a successor on the
 * node: `drainer.dev/agent=disabled`, a nodeSelector changed) removes its gate when nothing is left
 * on the host to protect, or nobody would ever open it and every drain of the node would wait until
 * its timeout. With VMs left (or unknown) the gate holds, and `drainer doctor` names it.
 */
async function dropKeeperless(o: GateKeeperOptions): Promise<void> {
  const expected = o.successorExpected;
  if (!expected || !o.drop || !(await stillSo(o, async () => !(await expected())))) return;
  await o
    .noSuccessor?.()
    .catch((err: unknown) =>
      o.log.warn({ err }, 'no agent will run on this node after this one; its record could not be ended'),
    );
  const left: Remaining = (await o.leftOnNode?.()) ?? { names: [], unknown: 'not asked' };
  if (anyLeft(left)) {
    o.log.warn(
      { node: o.nodeName, left: remainingText(left) },
      `no agent will run on this node after this one, and ${remainingText(left)} remain: the drain gate stays (drainer doctor names it; drainer release --node ${o.nodeName} opens it)`,
    );
    return;
  }
  await o.drop();
  o.log.warn(
    { node: o.nodeName },
    'no agent will run on this node after this one (its DaemonSet places none here), and no VM is left on it: the drain gate is removed',
  );
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
        if (!(await stillSo(o, o.uninstalled))) return await dropKeeperless(o);
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
