// The Node's mark of a host shutdown: set by the agent when logind announces PrepareForShutdown(true)
// (value: when), taken off after boot once the node and its compute service are ready. While it is
// there the node is evacuated with trigger "shutdown" (desired.ts): drainer cordons it as its own
// cordon, and the evacuation waits for no window, freeze, blocker or fleet slot, because the host goes
// down whatever drainer does; waiting would only leave more VMs to their fallback.
export const SHUTDOWN_ANNOTATION = 'drainer.dev/shutdown';
export const SHUTDOWN_TRIGGER = 'shutdown';
/**
 * logind's cap on a delay lock (InhibitDelayMaxUSec, in whole seconds) as the agent read it on its host's
 * bus at start: drainer doctor, which cannot reach the hosts' buses, weighs each node's evacuation with it.
 */
export const LOGIND_DELAY_ANNOTATION = 'drainer.dev/logind-delay-max';

export const isShutdownTrigger = (trigger: string | undefined): boolean => trigger === SHUTDOWN_TRIGGER;
