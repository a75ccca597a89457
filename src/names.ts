// Names other programs and people see on a Node (ground floor: kube/ and core/ both use them).

/** The Node annotation that holds drainer's record of a node (JSON). */
export const STATE_ANNOTATION = 'drainer.dev/state';
/** On a Node waiting for a fleet slot: when it first queued (epoch ms); fair order is ascending. */
export const QUEUED_LABEL = 'drainer.dev/queued';
/** drainer's own taint while it evacuates a node. */
export const EVACUATING_TAINT = { key: 'drainer.dev/evacuating', effect: 'NoSchedule' } as const;
/** Set by `drainer start <node> --now` (or on a NodeMaintenance): start past windows and blockers, once. */
export const START_NOW_ANNOTATION = 'drainer.dev/start-now';
/** Where `drainer restore --force` keeps a record it could not read (nothing is lost). */
export const UNREADABLE_ANNOTATION = 'drainer.dev/state-unreadable';
/** A Node labelled with this set to "true" opts out: drainer reports it and never evacuates it. */
export const IGNORE_LABEL = 'drainer.dev/ignore';
/** On a Node without a record: a change of drainer's found there (restored, or left), JSON; drainer status shows it. */
export const STRANDED_ANNOTATION = 'drainer.dev/stranded';
