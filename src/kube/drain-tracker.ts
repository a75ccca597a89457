// Confirms pod deletions from the watch of the node's pods (not by polling): a pod is gone when a
// DELETED event for its uid arrives, when a pod of the same name with another uid appears, or when
// a relist no longer contains it.
import type { WatchEventType } from './watch-stream.ts';
import { podKey, podRef, type KubePod, type PodRef } from './types.ts';

export class DeletionTracker {
  /** namespace/name → uid we wait on */
  readonly #uids = new Map<string, string>();
  readonly #waiters = new Map<string, () => void>();
  readonly #gone = new Set<string>();

  /** Resolves once the pod is gone; rejects when the signal aborts. */
  waitGone(ref: PodRef, signal: AbortSignal): Promise<void> {
    const uid = ref.uid ?? podKey(ref);
    if (this.#gone.has(uid)) return Promise.resolve();
    this.#uids.set(podKey(ref), uid);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters.delete(uid);
        reject(signal.reason as Error);
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.set(uid, () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /** Registers the pods to follow before any event can arrive. */
  follow(refs: readonly PodRef[]): void {
    for (const ref of refs) this.#uids.set(podKey(ref), ref.uid ?? podKey(ref));
  }

  observe(type: WatchEventType, pod: KubePod): void {
    const ref = podRef(pod);
    const uid = this.#uids.get(podKey(ref));
    if (uid === undefined) return;
    if (type === 'DELETED' ? (ref.uid ?? podKey(ref)) === uid : ref.uid !== undefined && ref.uid !== uid) {
      this.#done(podKey(ref), uid);
    }
  }

  synced(pods: readonly KubePod[]): void {
    const present = new Map(pods.map((p) => [podKey(podRef(p)), p.metadata.uid]));
    for (const [key, uid] of [...this.#uids]) {
      const now = present.get(key);
      if (!present.has(key) || (now !== undefined && now !== uid)) this.#done(key, uid);
    }
  }

  #done(key: string, uid: string): void {
    this.#uids.delete(key);
    this.#gone.add(uid);
    const w = this.#waiters.get(uid);
    this.#waiters.delete(uid);
    w?.();
  }
}
