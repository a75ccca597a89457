// The Node record: what drainer is doing on a node and what it changed, kept in the
// `drainer.dev/state` annotation so a restarted agent resumes and undoes only its own changes.
import { randomUUID } from 'node:crypto';
import * as z from '../../config/zod.ts';
import type { NodeChange } from '../cluster/cluster.ts';
import type { RecordStore } from '../backends/host.ts';
import type { PluginRecord } from '../backends/plugin.ts';

import { EVACUATING_TAINT, QUEUED_LABEL, STATE_ANNOTATION } from '../../names.ts';

export { EVACUATING_TAINT, QUEUED_LABEL, STATE_ANNOTATION };

export const PHASES = ['Queued', 'Evacuating', 'Evacuated', 'Failed', 'Restoring'] as const;
export type Phase = (typeof PHASES)[number];

const MAX_ERROR_CHARS = 1000;

/**
 * The record's schema version. A reader refuses a newer one (it cannot know what the newer fields
 * mean) instead of guessing; fields it does not know in a record it can read are kept on every
 * write (every object in the schema is loose), so a rollback and a roll forward lose nothing.
 */
export const RECORD_SCHEMA = 1;

const podFailureSchema = z.looseObject({ pod: z.string(), reason: z.string() });

/** Workloads of one plugin: moved, failed (or blocked) and the total it has to deal with. */
/** A long live migration's copy, as the plugin last read it (drainer status shows it). */
const copySchema = z.looseObject({
  name: z.string(),
  totalBytes: z.number(),
  remainingBytes: z.number(),
  converging: z.boolean(),
  stallAction: z.optional(z.string()),
});

const progressSchema = z.looseObject({
  moved: z.number(),
  total: z.number(),
  failed: z.number(),
  /** VMs still on the host, stopped ones too, and how many are stopped (backends/vm-count.ts). */
  onHost: z.optional(z.number()),
  stopped: z.optional(z.number()),
  /** Only while some migration's counters were read (long ones); absent otherwise. */
  copies: z.optional(z.array(copySchema)),
  /** Memory of the VMs still to move, and the copy rate measured so far (for the ETA). */
  memoryLeftBytes: z.optional(z.number()),
  bytesPerSecond: z.optional(z.number()),
});

const recordSchema = z.looseObject({
  /** The schema this record was written in (absent: written before versions, read as 1). */
  schemaVersion: z.optional(z.number()),
  phase: z.enum(PHASES),
  /**
   * This maintenance's identity: made with the record, kept until the record is cleared (an
   * operator's release and start-now are bound to it). Absent in a record an older version wrote.
   */
  id: z.optional(z.string()),
  /** "cordon" or "NodeMaintenance/<name>". */
  trigger: z.string(),
  /** When this evacuation began (ISO); while Queued, when the record was written. */
  since: z.string(),
  /** When the node first queued for a fleet slot (ISO, the agent's clock); kept across restarts. */
  queuedAt: z.optional(z.string()),
  /**
   * Its place in the fleet queue: the API server's time (epoch ms) when it queued, so that agents
   * whose clocks differ still queue first in, first out (the drainer.dev/queued label). Absent in a
   * record an older version wrote: queuedAt stands in.
   */
  queueStamp: z.optional(z.number()),
  /** The fleet slot (Lease name) held while Evacuating; removed when released. */
  slot: z.optional(z.string()),
  /** Queued again after it had begun (restart, lost slot): it resumes when it gets a slot, never starts afresh. */
  resumes: z.optional(z.boolean()),
  /** While Queued: why it may not start yet (window, freeze, blocker) and until when, if known (ISO). */
  waiting: z.optional(
    z.object({ kind: z.string(), reason: z.string(), since: z.string(), until: z.optional(z.string()) }),
  ),
  /** Started past windows and blockers on purpose (drainer start --now): who asked, and when. */
  startedNow: z.optional(z.object({ by: z.string(), at: z.string() })),
  /** Did drainer cordon the node (e.g. for a NodeMaintenance on a schedulable node)? */
  cordonedByUs: z._default(z.boolean(), false),
  /** Did drainer add drainer.dev/evacuating:NoSchedule? */
  taintedByUs: z._default(z.boolean(), false),
  /** The NodeMaintenance drainer holds a finalizer on. */
  maintenance: z.optional(
    z.looseObject({ name: z.string(), apiVersion: z.string(), uid: z.optional(z.string()) }),
  ),
  plugins: z._default(z.record(z.string(), z.record(z.string(), z.unknown())), {}),
  outcomes: z.optional(
    z.array(
      z.looseObject({
        plugin: z.string(),
        succeeded: z.boolean(),
        moved: z.number(),
        failed: z.number(),
        message: z.optional(z.string()),
      }),
    ),
  ),
  drain: z.optional(
    z.looseObject({
      succeeded: z.boolean(),
      total: z.number(),
      evicted: z.number(),
      ignored: z.number(),
      failed: z.array(podFailureSchema),
    }),
  ),
  /**
   * The pod drain's counts: written as pods are evicted and when the drain returns (drainer status
   * shows them; `drain` above is the final summary, written only once it returned).
   */
  pods: z.optional(z.looseObject({ total: z.number(), evicted: z.number(), failed: z.number() })),
  /** Per plugin, while Evacuating: the counts of its last progress report (drainer status shows them). */
  progress: z.optional(z.record(z.string(), progressSchema)),
  /** When the last evacuation attempt ended (ISO): a Failed record is retried a resync later. */
  attemptedAt: z.optional(z.string()),
  /** Failed attempts in a row (EvacuationFailed): the wait before the next one doubles with each. */
  failures: z.optional(z.number()),
  lastError: z.optional(z.string()),
  /** Why the last attempt failed, when it is one of the named refusals (InsufficientCapacity). */
  failureReason: z.optional(z.string()),
});

export type NodeRecord = z.output<typeof recordSchema>;
export type DrainSummary = NonNullable<NodeRecord['drain']>;
export type OutcomeSummary = NonNullable<NodeRecord['outcomes']>[number];
export type PluginProgress = z.output<typeof progressSchema>;

/** A message short enough for an annotation. Callers pass typed-error messages, which never hold secrets. */
export const errorText = (message: string): string =>
  message.length > MAX_ERROR_CHARS ? `${message.slice(0, MAX_ERROR_CHARS - 1)}…` : message;

/** What the annotation holds: nothing, a record this version reads, or one it must not act on. */
export type RecordRead =
  | { readonly kind: 'absent' }
  | { readonly kind: 'ok'; readonly record: NodeRecord }
  | { readonly kind: 'unreadable'; readonly problem: string };

/**
 * Reads the annotation. An unreadable one (bad JSON, an unknown phase, a newer schema) is never
 * guessed at: the agent stops acting on the node and leaves the annotation as it is.
 */
export function readRecord(text: string | undefined): RecordRead {
  if (text === undefined || text === '') return { kind: 'absent' };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { kind: 'unreadable', problem: `not JSON (${(e as Error).message})` };
  }
  const version = (raw as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (typeof version === 'number' && version > RECORD_SCHEMA)
    return {
      kind: 'unreadable',
      problem: `written by a newer drainer (schema ${version}; this one reads up to ${RECORD_SCHEMA})`,
    };
  const parsed = recordSchema.safeParse(raw);
  if (parsed.success) return { kind: 'ok', record: parsed.data };
  const issue = parsed.error.issues[0];
  return {
    kind: 'unreadable',
    problem: `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
  };
}

/** The text of an unreadable record's problem, with the ways out. */
export const unreadableText = (node: string, problem: string): string =>
  errorText(
    `unreadable ${STATE_ANNOTATION} annotation on node ${node}: ${problem}; drainer leaves the node alone ` +
      `until it is upgraded to a version that reads it, or \`drainer restore --node ${node} --force\` undoes what is recognisably drainer's`,
  );

/**
 * For display (status, demo): absent → undefined (in service); unreadable → a Failed record that
 * names the problem. The reconciler uses readRecord and never acts on such a record.
 */
export function parseRecord(text: string | undefined, now: Date = new Date()): NodeRecord | undefined {
  const read = readRecord(text);
  if (read.kind === 'absent') return undefined;
  if (read.kind === 'ok') return read.record;
  return unreadable(read.problem, now);
}

/** A fresh record of an unknown trigger, Failed with what was wrong (for display only). */
function unreadable(detail: string, now: Date): NodeRecord {
  return {
    ...newRecord('unknown', now),
    phase: 'Failed',
    lastError: errorText(`unreadable ${STATE_ANNOTATION} annotation: ${detail}`),
  };
}

/** Every write states the schema it was written in. */
export const serializeRecord = (record: NodeRecord): string =>
  JSON.stringify({ ...record, schemaVersion: RECORD_SCHEMA });

export function newRecord(trigger: string, now: Date): NodeRecord {
  return {
    phase: 'Evacuating',
    id: randomUUID(),
    trigger,
    since: now.toISOString(),
    cordonedByUs: false,
    taintedByUs: false,
    plugins: {},
  };
}

/** The maintenance a record is of (an older version's record: its start). */
export const recordId = (r: NodeRecord): string => r.id ?? r.since;

/** An evacuation that began: Evacuating, or Queued again for a slot after a restart or a lost slot. */
export const resumes = (r: NodeRecord | undefined): boolean =>
  r?.phase === 'Evacuating' || r?.resumes === true;

/**
 * Has drainer changed anything for this record yet: our cordon or taint, a plugin's saved state (a
 * plugin saves before it acts: nova-compute disabled, a drain taint), a moved workload?
 */
export const changedByUs = (r: NodeRecord | undefined): boolean =>
  !!r &&
  (r.cordonedByUs ||
    r.taintedByUs ||
    (r.outcomes ?? []).some((o) => o.moved > 0) ||
    Object.values(r.plugins).some((p) => Object.keys(p).length > 0));

/**
 * A first attempt: neither resumed nor following one that changed things (a retry of a Failed
 * evacuation that disabled a service or moved a server is not; it may not claim nothing changed).
 * Only a first attempt is refused by blockers or an enforced capacity check.
 */
export const firstAttempt = (r: NodeRecord | undefined): boolean => !resumes(r) && !changedByUs(r);

/** Its place in the fleet queue (epoch ms, the API server's clock): queueStamp, else queuedAt. */
export function queuePlace(record: NodeRecord): number | undefined {
  if (record.queueStamp !== undefined) return record.queueStamp;
  const at = record.queuedAt ? Date.parse(record.queuedAt) : NaN;
  return Number.isNaN(at) ? undefined : at;
}

/** The queue label a record implies: its place (epoch ms) while Queued, else none. */
export function queuedLabel(record: NodeRecord | undefined): string | null {
  if (record?.phase !== 'Queued') return null;
  const at = queuePlace(record);
  return at === undefined ? null : String(at);
}

/** Writes the serialised record (null: remove it), with labels to change in the same write. */
export type PersistRecord = (
  value: string | null,
  labels?: Record<string, string | null>,
  change?: NodeChange,
) => Promise<void>;

/**
 * The record of one node, written through `persist` (the Node annotation) on every change.
 * Writes are serialised and each writes the newest state, so concurrent plugin saves never
 * land out of order. The fleet queue label follows the phase in the same write: on while Queued,
 * off with the write that leaves Queued (the first write states it either way: a label left by
 * an earlier agent never outlives the record). Implements the host's RecordStore.
 */
export class NodeRecordStore implements RecordStore {
  #record: NodeRecord | undefined;
  readonly #persist: PersistRecord;
  #chain: Promise<void> = Promise.resolve();
  /** The queue label as last written; undefined until the first write. */
  #label: string | null | undefined;

  readonly #onWritten: ((record: NodeRecord | undefined) => void) | undefined;

  constructor(opts: {
    persist: PersistRecord;
    record?: NodeRecord | undefined;
    /** After each write that reached the API server, with the record written. */
    onWritten?: (record: NodeRecord | undefined) => void;
  }) {
    this.#persist = opts.persist;
    this.#record = opts.record;
    this.#onWritten = opts.onWritten;
  }

  get current(): NodeRecord | undefined {
    return this.#record;
  }

  get(plugin: string): PluginRecord | undefined {
    return this.#record?.plugins[plugin];
  }

  /** Saves a plugin's piece. Only valid while a record exists (an evacuation or restore is under way). */
  async save(plugin: string, record: PluginRecord): Promise<void> {
    const current = this.#record;
    if (!current) throw new Error(`no node record to save the ${plugin} record into`);
    this.#record = { ...current, plugins: { ...current.plugins, [plugin]: { ...record } } };
    await this.#write();
  }

  /** Replaces the record (or merges fields into it) and writes it. */
  async set(record: NodeRecord): Promise<void> {
    this.#record = record;
    await this.#write();
  }

  /** Merges fields into the record and writes it; with `change`, the Node change rides on the same write. */
  async update(fields: Partial<NodeRecord>, change?: NodeChange): Promise<void> {
    const current = this.#record;
    if (!current) throw new Error('no node record to update');
    this.#record = { ...current, ...fields };
    await this.#write(change);
  }

  /** Removes the annotation: the node is back in service. */
  async clear(): Promise<void> {
    this.#record = undefined;
    await this.#write();
  }

  #write(change?: NodeChange): Promise<void> {
    const run = this.#chain.then(async () => {
      const r = this.#record;
      const label = queuedLabel(r);
      const labels = label === this.#label ? undefined : { [QUEUED_LABEL]: label };
      await this.#persist(r ? serializeRecord(r) : null, labels, change);
      this.#label = label;
      this.#onWritten?.(r);
    });
    this.#chain = run.catch(() => undefined);
    return run;
  }
}
