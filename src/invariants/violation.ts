// A broken promise, as drainer doctor prints it and a test fails on it: which one (a stable id),
// about what, the evidence that shows it, and what to do about it.
export interface Violation {
  /** Stable, kebab-case: scripts and tests match on it. */
  readonly id: InvariantId;
  /** The object it is about, e.g. "node/node-a", "nova-compute/node-a.example.org". */
  readonly object: string;
  /** The node it is about, where the object is another (a server on its host): whose agent could act. */
  readonly node?: string;
  readonly evidence: string;
  readonly fix: string;
}

export const INVARIANT_IDS = [
  'gate-disrupted-while-occupied',
  'stranded-service',
  'migration-succeeded-unconfirmed',
  'moved-count-exceeds-nova',
  'migration-failed-but-moved',
  'gate-missing',
  'gate-not-holding',
  'maintenance-disagrees',
  'unexpected-4xx',
  'budget-exceeded',
  'leftover-gate',
  'gate-stuck',
  'record-without-agent',
  'lease-held-by-dead-agent',
  'stopped-server-left-stopped',
  'owner-stop-undone',
  'owner-action-reported-as-failure',
  'no-agent',
  'server-left-in-verify-resize',
  'stop-mark-left-stopped',
  'failure-for-completed-move',
  'gate-without-keeper',
  'vms-without-agent',
  'queue-out-of-order',
  'stop-mark-without-agent',
  'vm-stop-mark-without-agent',
  'machine-hook-without-agent',
  'maintenance-without-agent',
  'stranded-service-without-agent',
  'drain-timeout-short',
  'drain-overruled-under-hook',
  'shutdown-time-short',
] as const;

export type InvariantId = (typeof INVARIANT_IDS)[number];

/**
 * States an operator must act on, but that no component of drainer broke a promise to reach: a
 * record whose agent is gone (stopped, or never ran: run-once), a fleet slot its holder left.
 * drainer doctor reports them; the end-of-story checks of the e2e suites leave them out.
 */
export const OPERATOR_FINDINGS: ReadonlySet<InvariantId> = new Set([
  'record-without-agent',
  'gate-stuck',
  'lease-held-by-dead-agent',
  'no-agent',
  'vms-without-agent',
  'stop-mark-without-agent',
  'vm-stop-mark-without-agent',
  'machine-hook-without-agent',
  'maintenance-without-agent',
  'stranded-service-without-agent',
  'drain-timeout-short',
  'shutdown-time-short',
]);

export const violation = (id: InvariantId, object: string, evidence: string, fix: string): Violation => ({
  id,
  object,
  evidence,
  fix,
});
