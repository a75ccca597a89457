// core/v1 Events with aggregation: a repeat of (object, type, reason, message) bumps count and
// lastTimestamp on the Event we created instead of creating another. Recording never throws.
import type { Logger } from '../observability/logger.ts';
import { isNotFoundError } from '../errors.ts';
import type { KubeClients } from './client.ts';
import { MERGE_PATCH } from './http.ts';
import type { ObjectRef } from './types.ts';

/** The event catalogue (shared/design.md §4). */
export type EventReason =
  | 'EvacuationPlanned'
  | 'EvacuationStarted'
  | 'EvacuationQueued'
  | 'EvacuationWaiting'
  | 'EvacuationStartedNow'
  | 'MigrationStarted'
  | 'MigrationSucceeded'
  | 'MigrationFailed'
  /** A live migration that does not converge, and what was done about it (forced, aborted, left). */
  | 'MigrationStalled'
  /** A VM's owner is asked to move it (way out notify); after a timeout drainer moves it the default way. */
  | 'MoveRequested'
  | 'EvacuationBlocked'
  | 'EvacuationSucceeded'
  | 'EvacuationFailed'
  | 'DrainStarted'
  | 'EvictionBlocked'
  | 'DrainSucceeded'
  | 'RestoreSucceeded'
  | 'DrainGateHeld'
  | 'DrainGateReleased'
  /** The drain gate should hold and does not (image not pullable, pod failing or deleted …), or a restore stopped waiting for it. */
  | 'DrainGateNotHeld'
  /** The capacity pre-flight: the workloads do not fit elsewhere (or the check could not run). */
  | 'InsufficientCapacity'
  /** A NodeMaintenance we cannot honour (node missing, duplicate, nodeName changed). */
  | 'MaintenanceInvalid'
  /** The node's record cannot be read by this version: the agent leaves the node alone. */
  | 'RecordUnreadable'
  /** Cluster API: a deleted Machine waits on drainer's pre-drain hook, which stays (the evacuation failed). */
  | 'PreDrainHookHeld'
  /** Cluster API: drainer's pre-drain hook taken off the Machine (the node is Evacuated). */
  | 'PreDrainHookRemoved'
  /** A fleet tool's drain timeout (nodeDrainTimeout, terminationGracePeriod) is shorter than the evacuation may take. */
  | 'DrainTimeoutShort'
  /** `drainer restore --force` without a readable record: what was recognisably ours is undone. */
  | 'RestoreForced'
  /** The cloud rejected drainer's credentials (Keystone 401): fix the secret, not the capacity. */
  | 'CloudAuthFailed'
  /** A change of drainer's with no record to own it (nova-compute left disabled): restored, or why not. */
  | 'StrandedService';

export type EventType = 'Normal' | 'Warning';

export interface EventSink {
  record(involved: ObjectRef, type: EventType, reason: EventReason, message: string): Promise<void>;
}

export interface EventRecorderOptions {
  readonly k: KubeClients;
  readonly log: Logger;
  /** Goes into source.host / reportingInstance (the agent's node). */
  readonly host?: string;
  readonly component?: string;
  readonly now?: () => Date;
  /** How many distinct keys are remembered for aggregation (oldest forgotten first). */
  readonly cacheSize?: number;
}

interface Seen {
  namespace: string;
  name: string;
  count: number;
}

const MAX_MESSAGE = 1024;

export class EventRecorder implements EventSink {
  readonly #o: EventRecorderOptions;
  readonly #seen = new Map<string, Seen>();
  /** Per-key chain so two concurrent repeats don't both create an Event. */
  readonly #chains = new Map<string, Promise<void>>();

  constructor(opts: EventRecorderOptions) {
    this.#o = opts;
  }

  record(involved: ObjectRef, type: EventType, reason: EventReason, message: string): Promise<void> {
    const msg = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 3)}...` : message;
    const key = JSON.stringify([
      involved.kind,
      involved.namespace,
      involved.name,
      involved.uid,
      type,
      reason,
      msg,
    ]);
    const prev = this.#chains.get(key) ?? Promise.resolve();
    const next = prev.then(() => this.#write(key, involved, type, reason, msg));
    this.#chains.set(key, next);
    void next.finally(() => {
      if (this.#chains.get(key) === next) this.#chains.delete(key);
    });
    return next;
  }

  async #write(key: string, involved: ObjectRef, type: EventType, reason: EventReason, message: string) {
    const now = (this.#o.now?.() ?? new Date()).toISOString();
    const seen = this.#seen.get(key);
    try {
      if (seen) {
        try {
          await this.#o.k.request({
            method: 'PATCH',
            path: `/api/v1/namespaces/${seen.namespace}/events/${seen.name}`,
            contentType: MERGE_PATCH,
            body: { count: seen.count + 1, lastTimestamp: now },
          });
          seen.count++;
          this.#remember(key, seen);
          return;
        } catch (err) {
          if (!isNotFoundError(err)) throw err;
          // the Event expired (TTL): start a new one
        }
      }
      const created = await this.#create(involved, type, reason, message, now);
      this.#remember(key, created);
    } catch (err) {
      this.#o.log.warn(
        { err, reason, object: `${involved.kind}/${involved.name}` },
        'could not record Event',
      );
    }
  }

  async #create(involved: ObjectRef, type: EventType, reason: EventReason, message: string, now: string) {
    const namespace = involved.namespace ?? 'default';
    const name = `${involved.name}.${Date.now().toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`;
    const component = this.#o.component ?? 'drainer';
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: { ...involved },
      reason,
      message,
      type,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component, ...(this.#o.host ? { host: this.#o.host } : {}) },
      reportingComponent: component,
      reportingInstance: this.#o.host ?? component,
    };
    await this.#o.k.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/events`, body });
    return { namespace, name, count: 1 };
  }

  #remember(key: string, seen: Seen): void {
    this.#seen.delete(key);
    this.#seen.set(key, seen);
    const max = this.#o.cacheSize ?? 1000;
    while (this.#seen.size > max) {
      const oldest = this.#seen.keys().next().value;
      if (oldest === undefined) break;
      this.#seen.delete(oldest);
    }
  }
}
