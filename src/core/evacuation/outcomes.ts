// The plugins' outcomes as the record keeps them and as a failure message says them.
import type { Outcome } from '../backends/plugin.ts';
import { errorText, type OutcomeSummary } from '../record/record.ts';

export const summarize = (o: Outcome): OutcomeSummary => ({
  plugin: o.plugin,
  succeeded: o.succeeded,
  moved: o.workloads.filter((w) => w.state === 'succeeded').length,
  failed: o.workloads.filter((w) => w.state === 'failed' || w.state === 'blocked').length,
  ...(o.message ? { message: errorText(o.message) } : {}),
});

export function failureText(outcomes: readonly Outcome[]): string {
  return outcomes
    .filter((o) => !o.succeeded)
    .map((o) => {
      // a plugin's message may name its workloads already ("vms/x cannot migrate (…)"): not twice
      const bad = o.workloads.filter(
        (w) => (w.state === 'failed' || w.state === 'blocked') && !o.message?.includes(w.name),
      );
      const names = bad.map((w) => `${w.name}: ${w.message ?? w.state}`).join('; ');
      return `${o.plugin}: ${o.message ?? 'not every workload moved'}${names ? ` (${names})` : ''}`;
    })
    .join('; ');
}
