// Delivers recorded changes to watchers in resourceVersion order. A listener that writes to the
// store (a controller) would otherwise deliver its change to later listeners before the one being
// delivered; the queue keeps every listener's view in order.
import type { Bucket, ChangeEvent } from './bucket.ts';

export class ChangeDelivery {
  #pending: [Bucket, ChangeEvent][] = [];
  #delivering = false;

  /** Records `e` in `b`'s history and notifies its listeners (now, or after the current delivery). */
  emit(b: Bucket, e: ChangeEvent): void {
    b.remember(e);
    this.#pending.push([b, e]);
    if (this.#delivering) return;
    this.#delivering = true;
    try {
      for (let i = 0; i < this.#pending.length; i++) {
        const [bucket, event] = this.#pending[i] as [Bucket, ChangeEvent];
        bucket.notify(event);
      }
    } finally {
      this.#pending = [];
      this.#delivering = false;
    }
  }
}
