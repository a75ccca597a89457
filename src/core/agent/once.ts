// run-once and restore on Kubernetes: the agent's reconcile of one node, once, in the foreground.
// The record lands on the Node, so a daemon started later resumes or undoes exactly this work.
import type { Config } from '../../config/schema.ts';
import type { KubeClients } from '../../kube/client.ts';
import { getNode, setUnschedulable } from '../../kube/node.ts';
import type { Logger } from '../../observability/logger.ts';
import { isNotFoundError, NodeHeldError, UnknownNodeError } from '../../errors.ts';
import type { RestoreResult } from '../backends/host.ts';
import { createNodeLease, createReconciler } from './node-agent.ts';
import { PluginHost } from '../backends/host.ts';
import { releaseKeeperless } from '../gate/release-keeperless.ts';
import { remainingOn } from '../gate/remaining.ts';
import type { Slot } from '../fleet/types.ts';
import type { BackendPlugin } from '../backends/plugin.ts';
import type { NodeRecord } from '../record/record.ts';

export interface OnceOptions {
  readonly k: KubeClients;
  readonly config: Config;
  readonly node: string;
  readonly plugins: readonly BackendPlugin[];
  readonly log: Logger;
  readonly signal: AbortSignal;
  /** run-once --no-budget: evacuate without a fleet slot. */
  readonly noBudget?: boolean;
  /** --force: act even while another agent instance holds the node's Lease. */
  readonly force?: boolean;
  /** Hears the wait for a silent holder's Lease: the holder, the seconds left, its last renewal. */
  readonly onWait?: (holder: string, secondsLeft: number, renewTime?: string) => void;
}

/**
 * The node's agent Lease for the run, or none with --force (logged) or in a dry run. A holder that
 * is not us and looks live (renewed within its duration) makes run-once or restore refuse at once,
 * naming it: that agent is acting on the node, and a manual run next to it would race it. Only a
 * silent holder is watched (`onWait` hears the countdown): unchanged for its duration, it is gone
 * and the Lease is taken; renewed meanwhile, it is live after all.
 */
async function takeNode(o: OnceOptions, command: 'run-once' | 'restore'): Promise<Slot | undefined> {
  const lease = createNodeLease({ ...o, nodeName: o.node });
  if (!lease) return undefined;
  // --force acts whoever holds it, so it does not wait to find out
  const take = o.force ? await lease.tryTake() : await lease.takeWatching(o.signal, o.onWait);
  if ('held' in take) return take.held;
  const renewed = take.renewTime ? `, renewed ${take.renewTime}` : '';
  if (o.force) {
    o.log.warn(
      { node: o.node, holder: take.holder },
      '--force: acting although another agent holds the node',
    );
    return undefined;
  }
  // a dead agent's Lease that still looks live runs out by itself: say when to try again
  const runsOut =
    take.looksLive && take.runsOutAt ? `; if that agent is gone, its Lease runs out ${take.runsOutAt}` : '';
  throw new NodeHeldError(
    `node ${o.node} is held by agent ${take.holder} (Lease ${o.config.fleet.namespace}/${lease.name}${renewed}): ` +
      `it is acting on this node; ${command} refuses (stop that agent, or pass --force)${runsOut}`,
    take.holder,
  );
}

/** The Node, read first: a node the cluster does not have is bad input, before any Lease is taken. */
const existingNode = (o: OnceOptions) =>
  getNode(o.k, o.node).catch((err: unknown) => {
    if (!isNotFoundError(err)) throw err;
    throw new UnknownNodeError(o.node, { cause: err });
  });

/**
 * Evacuates the node now. With `cordon`, cordons it first as an operator would (so a running agent
 * keeps it evacuated, and `drainer restore` or an uncordon puts it back).
 */
export async function evacuateOnce(o: OnceOptions & { cordon: boolean }): Promise<NodeRecord | undefined> {
  const node = await existingNode(o);
  // before any change: a daemon acting on the node makes run-once refuse with nothing done
  const held = await takeNode(o, 'run-once');
  // the slot's Lease watch ends with this evacuation, not with the process
  const done = new AbortController();
  const signal = AbortSignal.any([o.signal, done.signal]);
  try {
    let cordoned = node.spec?.unschedulable === true;
    if (o.cordon && !cordoned) {
      if (o.config.dryRun) o.log.info({ node: o.node }, 'dry run: would cordon the node');
      else {
        await setUnschedulable(o.k, o.node, true);
        cordoned = true;
      }
    }
    if (o.noBudget) o.log.warn({ node: o.node }, '--no-budget: evacuating without a fleet slot');
    const reconciler = createReconciler({ ...o, signal, nodeName: o.node, once: true });
    return await reconciler.evacuateNow(o.node, o.signal, cordoned ? 'cordon' : 'run-once');
  } finally {
    done.abort();
    await held?.release();
  }
}

/**
 * Undoes what the node's record says drainer changed, and clears it. A live agent on the node makes
 * it refuse, as run-once does. With `force`, neither that agent nor a record this version cannot
 * read stops it: what is recognisably drainer's is undone instead.
 */
export async function restoreOnce(o: OnceOptions): Promise<RestoreResult[]> {
  await existingNode(o);
  // before any change: the node's own agent would undo or redo this restore as it reconciles
  const held = await takeNode(o, 'restore');
  let results: RestoreResult[];
  try {
    results = await createReconciler({ ...o, noBudget: true, nodeName: o.node }).restoreNow(
      o.node,
      o.signal,
      o.force === true,
    );
  } finally {
    await held?.release();
  }
  await dropKeeperlessGate(o);
  return results;
}

/**
 * The restore held the node's gate again (before giving the host back); with no agent on the node
 * and none coming, nobody would ever open it: removed while the host is still empty.
 */
async function dropKeeperlessGate(o: OnceOptions): Promise<void> {
  if (o.config.dryRun) return;
  const host = new PluginHost({ plugins: o.plugins, log: o.log });
  try {
    // restore's --force is about who acts (no agent, an unreadable record), never about the gate:
    // with a VM left on the host it stays (chaos seed 918273: the next drain took them down)
    const r = await releaseKeeperless(
      { ...o, force: false, remaining: () => remainingOn(host, o.node, o.signal) },
      new Date(),
    );
    if (r?.released) o.log.info({ node: o.node }, r.lines[0] ?? 'drain gate removed: no agent keeps it');
  } catch (err) {
    o.log.warn({ err, node: o.node }, 'could not look for an agent to keep the drain gate');
  }
}

/** Lines for a person, and the exit code: 0 Evacuated, 1 otherwise. */
export function describeRecord(node: string, rec: NodeRecord | undefined): { lines: string[]; code: number } {
  if (!rec) return { lines: [`node ${node}: nothing recorded`], code: 1 };
  const lines = [`node ${node}: ${rec.phase} (trigger ${rec.trigger})`];
  for (const o of rec.outcomes ?? []) {
    const status = o.succeeded ? 'done' : 'incomplete';
    lines.push(
      `${o.plugin}: ${status}, ${o.moved} moved, ${o.failed} stayed${o.message ? ` (${o.message})` : ''}`,
    );
  }
  const d = rec.drain;
  if (d)
    lines.push(`pods: ${d.evicted} of ${d.total} evicted, ${d.ignored} ignored, ${d.failed.length} failed`);
  for (const f of d?.failed ?? []) lines.push(`  stayed: pod ${f.pod}: ${f.reason}`);
  if (rec.lastError)
    lines.push(`error${rec.failureReason ? ` (${rec.failureReason})` : ''}: ${rec.lastError}`);
  return { lines, code: rec.phase === 'Evacuated' ? 0 : 1 };
}
