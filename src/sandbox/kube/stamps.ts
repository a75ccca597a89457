// What the sandbox stamps on objects, and the exact moment behind each stamp. Objects carry real
// time in whole seconds, as a real API server writes them, so kubectl ages read true in a kept
// sandbox. The scenario runs on a faster clock, on which one real second is `scale` seconds: a stamp
// weighed against that clock is only good to `scale` seconds. So the moments the scenario's waits
// and the promises weigh (creation, deletion, a migration's end, an eviction) are kept exactly, on
// the scenario clock, by object uid, for as long as the object exists.
import type { Clock } from '../clock.ts';
import { rfc3339 } from './server-fields.ts';
import type { KubeObject } from './types.ts';

/** The fields of the metadata stamps, as the kept moments name them. */
export const CREATED = 'metadata.creationTimestamp';
export const DELETED = 'metadata.deletionTimestamp';

const META = { creationTimestamp: CREATED, deletionTimestamp: DELETED } as const;

/** The scenario clock as far as stamps go. */
export type StampClock = Pick<Clock, 'now' | 'wallOf' | 'fromWall'>;

/** Real time, one to one: the API server without a scenario. */
export const realTime: StampClock = { now: () => Date.now(), wallOf: (ms) => ms, fromWall: (ms) => ms };

export class Stamps {
  readonly clock: StampClock;
  readonly #kept = new Map<string, Map<string, number>>();
  /** Creation order by uid: objects created in one scenario moment still came one after another. */
  readonly #created = new Map<string, number>();
  #next = 0;

  constructor(clock: StampClock = realTime) {
    this.clock = clock;
  }

  /** The stamp of a scenario moment (now by default): its real time, in whole seconds. */
  at(simMs = this.clock.now()): string {
    return rfc3339(this.clock.wallOf(simMs));
  }

  /** Stamps `field` of the object `uid` with a moment (now by default), keeping the moment exactly. */
  stamp(uid: string | undefined, field: string, simMs = this.clock.now()): string {
    if (uid && field === CREATED && !this.#created.has(uid)) this.#created.set(uid, this.#next++);
    if (uid) {
      const fields = this.#kept.get(uid) ?? new Map<string, number>();
      fields.set(field, simMs);
      this.#kept.set(uid, fields);
    }
    return this.at(simMs);
  }

  /**
   * The scenario moment of the stamp in `field` of the object `uid` (`wallMs`, its real time): the
   * kept one when it was stamped here, else the stamp's own, good to `scale` seconds; NaN for NaN.
   */
  momentOf(uid: string | undefined, field: string, wallMs: number): number {
    const kept = uid ? this.#kept.get(uid)?.get(field) : undefined;
    // kept only while it is the moment of this stamp (a client may have written another)
    if (kept !== undefined && !Number.isNaN(wallMs) && this.at(kept) === rfc3339(wallMs)) return kept;
    return this.clock.fromWall(wallMs);
  }

  /** The scenario moment of an object's creation or deletion stamp (NaN without one). */
  metaMoment(obj: KubeObject, field: 'creationTimestamp' | 'deletionTimestamp'): number {
    return this.momentOf(obj.metadata.uid, META[field], Date.parse(obj.metadata[field] ?? ''));
  }

  /**
   * When it was created, to the order within a moment: creation then sequence (a controller's FIFO
   * workqueue takes objects created in one moment in the order their ADDED events came).
   */
  createdOrder(obj: KubeObject): [number, number] {
    return [this.metaMoment(obj, 'creationTimestamp'), this.#created.get(obj.metadata.uid ?? '') ?? Infinity];
  }

  /** The object is gone: its moments go too. */
  forget(uid: string | undefined): void {
    if (uid) this.#created.delete(uid);
    if (uid) this.#kept.delete(uid);
  }
}
