// A stranded service: nova-compute disabled with drainer's reason while the node has no record
// (the Node was deleted and registered again, or the record removed), so no restore would ever
// enable it. Shared by the agent (which acts on it) and the invariants behind `drainer doctor`.

/** The Event that tells an operator about a stranded service (restored, or why not). */
export const strandedEventReason = 'StrandedService';

export interface ServiceState {
  readonly status: string;
  readonly disabledReason?: string | null;
}

/** Disabled, with a reason that starts with drainer's prefix: recognisably drainer's change. */
export const isDisabledByDrainer = (svc: ServiceState, prefix: string): boolean =>
  svc.status === 'disabled' && (svc.disabledReason ?? '').startsWith(prefix);

/**
 * What the node's agent does about its service: nothing (not drainer's, or a record owns it),
 * enable it (the node is in service), or only report it (the node is to be evacuated, or ignored).
 */
export type StrandedAction = 'none' | 'restore' | 'report';

export function strandedAction(opts: {
  readonly service: ServiceState;
  readonly prefix: string;
  readonly hasRecord: boolean;
  readonly inService: boolean;
}): StrandedAction {
  if (opts.hasRecord || !isDisabledByDrainer(opts.service, opts.prefix)) return 'none';
  return opts.inService ? 'restore' : 'report';
}
