// Names other programs and people see on a Node (ground floor: kube/ and core/ both use them).

/** The Node annotation that holds drainer's record of a node (JSON). */
export const STATE_ANNOTATION = 'drainer.dev/state';
/** On a Node waiting for a fleet slot: when it first queued (epoch ms); fair order is ascending. */
export const QUEUED_LABEL = 'drainer.dev/queued';
/** drainer's own taint while it evacuates a node. */
export const EVACUATING_TAINT = { key: 'drainer.dev/evacuating', effect: 'NoSchedule' } as const;
/** A Node labelled with this set to "true" opts out: drainer reports it and never evacuates it. */
export const IGNORE_LABEL = 'drainer.dev/ignore';
