// The moves of one pass sent side by side (migrator.ts #startMore): how many are still unanswered,
// and waiting for them all, so that no call of drainer's is left running after its pass.

export class Starting {
  readonly #calls = new Set<Promise<void>>();
  readonly #unanswered = new Set<unknown>();

  /** Sent and not yet answered (their servers not yet counted as migrating). */
  get size(): number {
    return this.#unanswered.size;
  }

  add(key: unknown, call: Promise<void>): void {
    this.#unanswered.add(key);
    const answered = call.finally(() => this.#unanswered.delete(key));
    answered.catch(() => undefined); // its failure is thrown by settled()
    this.#calls.add(answered);
  }

  /** Every call answered; the first one that failed throws (an abort, a refused credential). */
  async settled(): Promise<void> {
    const results = await Promise.allSettled(this.#calls);
    this.#calls.clear();
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
