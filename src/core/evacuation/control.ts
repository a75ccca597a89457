// What an evacuation step is given to notice it should stop (cancel, shutdown, a lost fleet
// slot), and how a step that throws because of it answers "stopped" instead.

export interface EvacuationControl {
  /** Aborted on cancel (desired changed) or with the agent's shutdown. */
  readonly signal: AbortSignal;
  cancelled(): boolean;
  /** True once the fleet slot this evacuation held was lost (set by withSlot). */
  lostSlot?(): boolean;
}

/** Runs a step; when the step throws because we were cancelled or shut down, answers undefined. */
export async function unlessStopped<T>(
  ctl: EvacuationControl,
  step: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await step();
  } catch (err) {
    if (ctl.signal.aborted) return undefined;
    throw err;
  }
}
