// Everything a test creates registers its undo here; undo runs last-in first-out even when the
// test failed, and every step runs even when an earlier one threw.
export class Cleanup {
  private readonly steps: { label: string; undo: () => Promise<unknown> }[] = [];

  add(label: string, undo: () => Promise<unknown>): void {
    this.steps.push({ label, undo });
  }

  async run(): Promise<void> {
    const errors: Error[] = [];
    while (this.steps.length > 0) {
      const step = this.steps.pop()!;
      try {
        await step.undo();
      } catch (e) {
        errors.push(new Error(`cleanup "${step.label}" failed: ${(e as Error).message}`));
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, errors.map((e) => e.message).join('\n'));
  }
}
