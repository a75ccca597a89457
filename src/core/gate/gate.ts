// One node's drain gate, level-triggered: the core says what it wants (held or released), and each
// look compares that with what the API server has. A missing pod or PDB is made again and an altered
// PDB restored while the gate should hold; until it really holds (PDB observed with no disruption
// allowed, pod Running and Ready) it is looked at again with a backoff, and at once when the agent's
// watch of the gate objects sees a change. Looks are applied one at a time, each for the newest wish,
// so a slow hold at start cannot land after the release.
import type { Logger } from '../../observability/logger.ts';
import type { EventReason } from '../cluster/cluster.ts';
import { isGatePodName, legacyGateNames } from '../../kube/gate.ts';
import type { GateApi, GateObjects } from './api.ts';
import { hasGateFinalizer, isOpen, pdbAltered, RELEASED, seeHeld, type GateSeen } from './observe.ts';

export type { GateSeen } from './observe.ts';

export interface DrainGateOptions {
  readonly api: GateApi;
  /** The gate pod of a node (drainer's own pod drain leaves it alone). */
  readonly podOf: (node: string) => { readonly namespace: string; readonly name: string };
  readonly log: Logger;
  /** After each look: what the API server shows, and whether the gate should hold. */
  readonly onSeen?: (node: string, seen: GateSeen, wantHeld: boolean) => void;
  /** Events on the node (held again, not held and why, released). */
  readonly event?: (node: string, type: 'Normal' | 'Warning', reason: EventReason, message: string) => void;
  /** Looks again while it should hold and does not: first wait, doubling up to the last (ms). */
  readonly retry?: { readonly initialMs: number; readonly maxMs: number };
  /** A start that takes longer than this (ms) is reported as not held (default 30 s). */
  readonly slowStartMs?: number;
  readonly now?: () => number;
}

interface NodeGate {
  chain: Promise<void>;
  pending?: Promise<void> | undefined;
  timer?: ReturnType<typeof setTimeout> | undefined;
  failures: number;
  /** The wish made last (each set() is a new one), and the wish the last look began under. */
  wish: number;
  seenFor?: { readonly wish: number; readonly held: boolean } | undefined;
  seen?: GateSeen | undefined;
  /** Since when it should hold and does not (ms). */
  notHeldSince?: number | undefined;
  /** The not-held text last reported in an Event. */
  reported?: string | undefined;
  readonly waiters: Set<() => void>;
}

/** Does the gate need a change to hold (not only time for its pod to start)? */
function needsHold(node: string, o: GateObjects): boolean {
  const { pdb, pod } = o;
  // an older version's objects go once this gate holds (hold removes them then)
  if (!pdb || !pod || o.legacy?.length) return true;
  if (!pdb.metadata.deletionTimestamp && pdbAltered(node, pdb)) return true;
  // only a pod being deleted (its finalizer holds drains until it goes): a spare takes over
  if (pod.metadata.deletionTimestamp) return true;
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  const owner = pod.metadata.ownerReferences?.find((r) => r.controller)?.uid;
  return !hasGateFinalizer(pod) || phase === 'Succeeded' || phase === 'Failed' || owner !== pdb.metadata.uid;
}

export class DrainGate {
  readonly #o: DrainGateOptions;
  readonly #want = new Map<string, boolean>();
  readonly #nodes = new Map<string, NodeGate>();
  #stopped = false;

  constructor(o: DrainGateOptions) {
    this.#o = o;
  }

  /** Held (true) or released; resolves once the newest wish was applied and looked at. Throws API errors. */
  set(node: string, held: boolean): Promise<void> {
    this.#want.set(node, held);
    this.#state(node).wish++;
    return this.#look(node);
  }

  /**
   * The same, in the background (errors are logged; the gate looks again with a backoff). A wish
   * already made costs nothing when it is so as last seen, or a look is under way or due (the
   * watch of the gate objects and the backoff bring it about): a pass makes no request for it.
   */
  want(node: string, held: boolean): void {
    const s = this.#nodes.get(node);
    const seen = s?.seen;
    const so = seen !== undefined && (held ? seen.held : seen === RELEASED);
    if (this.#want.get(node) === held && (so || s?.timer !== undefined || s?.pending !== undefined)) return;
    this.set(node, held).catch((err: unknown) =>
      this.#o.log.warn({ err, node }, 'could not set the drain gate; trying again'),
    );
  }

  /** Something changed the node's gate objects: look again (once a wish is known). */
  heal(node: string): void {
    if (!this.#want.has(node) || this.#stopped) return;
    this.#look(node).catch((err: unknown) =>
      this.#o.log.debug({ err, node }, 'drain gate look failed; trying again'),
    );
  }

  /** Is this one of the node's gate pods (its own, a spare, or an older version's)? */
  isGatePod(node: string, pod: { namespace: string; name: string }): boolean {
    const gate = this.#o.podOf(node);
    const legacy: readonly string[] = legacyGateNames(node);
    return (
      pod.namespace === gate.namespace &&
      (pod.name === gate.name || isGatePodName(node, pod.name) || legacy.includes(pod.name))
    );
  }

  /** Held as the API server last showed it (undefined: not looked at yet, or the look failed). */
  held(node: string): boolean | undefined {
    return this.#nodes.get(node)?.seen?.held;
  }

  /** What the last look showed. */
  seen(node: string): GateSeen | undefined {
    return this.#nodes.get(node)?.seen;
  }

  /**
   * Resolves true once the gate holds, false after `ms` (or when the signal aborts). Only a look
   * that began after the newest wish (to hold) counts: a release still in flight when the hold was
   * wished for, or a look under an older wish, says nothing of what the API server will show.
   */
  async whenHeld(node: string, ms: number, signal?: AbortSignal): Promise<boolean> {
    const s = this.#state(node);
    const end = (this.#o.now?.() ?? Date.now()) + ms;
    for (;;) {
      const f = s.seenFor;
      if (s.seen?.held && f?.held && f.wish === s.wish) return true;
      const left = end - (this.#o.now?.() ?? Date.now());
      if (left <= 0 || signal?.aborted) return false;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t);
          s.waiters.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const t = setTimeout(done, left);
        s.waiters.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** No more looks (the agent stops). */
  stop(): void {
    this.#stopped = true;
    for (const s of this.#nodes.values()) clearTimeout(s.timer);
  }

  #state(node: string): NodeGate {
    let s = this.#nodes.get(node);
    if (!s) {
      s = { chain: Promise.resolve(), failures: 0, wish: 0, waiters: new Set() };
      this.#nodes.set(node, s);
    }
    return s;
  }

  /** One look at a time per node; a look asked for while one waits to start is that one. */
  #look(node: string): Promise<void> {
    const s = this.#state(node);
    if (s.pending) return s.pending;
    const run = s.chain.then(() => {
      s.pending = undefined;
      return this.#apply(node, s);
    });
    s.pending = run;
    s.chain = run.catch(() => undefined);
    return run;
  }

  async #apply(node: string, s: NodeGate): Promise<void> {
    clearTimeout(s.timer);
    s.timer = undefined;
    const want = this.#want.get(node) ?? true;
    const wish = s.wish;
    const api = this.#o.api;
    try {
      let objs = await api.look(node);
      if (want && needsHold(node, objs)) {
        await api.hold(node);
        objs = await api.look(node);
      } else if (!want && !isOpen(objs)) {
        if (await api.release(node)) this.#o.log.info({ node }, 'drain gate released');
        objs = await api.look(node);
      }
      if (objs.unowned) objs = await this.#adopt(node, objs);
      const seen = want ? seeHeld(node, objs) : isOpen(objs) ? RELEASED : seeHeld(node, objs);
      this.#report(node, s, seen, want);
      s.seenFor = { wish, held: want };
      // not yet as wished, or owned by no DaemonSet yet: look again with a backoff
      const unsettled = (want && !seen.held) || (objs.unowned === true && api.adopt !== undefined);
      s.failures = unsettled ? s.failures + 1 : 0;
      if (unsettled) this.#again(node, s);
      else if (!want && !isOpen(objs)) this.#again(node, s);
    } catch (err) {
      s.seen = undefined;
      s.seenFor = undefined;
      s.failures++;
      this.#again(node, s);
      throw err;
    } finally {
      for (const wake of [...s.waiters]) wake();
    }
  }

  /**
   * Whatever the wish, the PDB goes to a re-created agent DaemonSet. Nothing else may touch the gate
   * after the re-creation, so the gate looks again (with the backoff) until it is done. A failure
   * here never keeps the gate from holding: it is tried again at the next look.
   */
  async #adopt(node: string, objs: GateObjects): Promise<GateObjects> {
    const api = this.#o.api;
    if (!api.adopt) return objs;
    try {
      await api.adopt(node);
      return await api.look(node);
    } catch (err) {
      this.#o.log.debug({ err, node }, 'drain gate PDB not given to the agent DaemonSet yet; trying again');
      return objs;
    }
  }

  #again(node: string, s: NodeGate): void {
    if (this.#stopped) return;
    const { initialMs, maxMs } = this.#o.retry ?? { initialMs: 500, maxMs: 60_000 };
    const ms = Math.min(maxMs, initialMs * 2 ** Math.max(0, s.failures - 1));
    clearTimeout(s.timer);
    s.timer = setTimeout(() => this.heal(node), ms);
    s.timer.unref?.();
  }

  /** The metric after every look; an Event when it changes in a way an operator must hear of. */
  #report(node: string, s: NodeGate, seen: GateSeen, want: boolean): void {
    const before = s.seen;
    s.seen = seen;
    this.#o.onSeen?.(node, seen, want);
    const now = this.#o.now?.() ?? Date.now();
    const event = this.#o.event;
    if (!want) {
      s.notHeldSince = undefined;
      s.reported = undefined;
      if (seen === RELEASED && before !== undefined && before !== RELEASED)
        event?.(
          node,
          'Normal',
          'DrainGateReleased',
          `drain gate released: no virtual machine left on ${node}`,
        );
      return;
    }
    if (seen.held) {
      if (s.reported)
        event?.(node, 'Normal', 'DrainGateHeld', `drain gate of ${node} holds again (${s.reported} before)`);
      s.notHeldSince = undefined;
      s.reported = undefined;
      return;
    }
    s.notHeldSince ??= now;
    const slow = now - s.notHeldSince >= (this.#o.slowStartMs ?? 30_000);
    if ((seen.lasting || slow) && s.reported !== seen.text) {
      s.reported = seen.text;
      this.#o.log.warn({ node, gate: seen.text }, 'drain gate does not hold');
      event?.(node, 'Warning', 'DrainGateNotHeld', `drain gate of ${node} ${seen.text}`);
    }
  }
}
