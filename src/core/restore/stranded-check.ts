// The agent's look for stranded changes (core/restore/stranded.ts): on a node with no record, a change of
// drainer's still in place is undone when the node is in service, and told in either case: an Event
// StrandedService, and the drainer.dev/stranded annotation that `drainer status` shows.
import { STRANDED_ANNOTATION } from '../../names.ts';
import type { StrandedChange } from '../backends/plugin.ts';
import type { NodeRun } from '../agent/run-context.ts';

/** One change found, as the annotation keeps it (JSON list). */
export interface StrandedNote extends StrandedChange {
  readonly plugin: string;
  /** When it was found (ISO). */
  readonly at: string;
}

/** The notes on a Node, or none when absent or not ours to read. */
export function strandedNotes(text: string | undefined): StrandedNote[] {
  if (!text) return [];
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? (v as StrandedNote[]).filter((n) => typeof n?.what === 'string') : [];
  } catch {
    return [];
  }
}

/** How long `drainer status` shows a change that was restored. */
export const RESTORED_SHOWN_MS = 24 * 3600_000;

const eventText = (node: string, plugin: string, c: StrandedChange): string => {
  const found = `${plugin}: ${c.what} was left by drainer (reason "${c.reason}") with no record on node ${node} (the Node was deleted and registered again, or its record removed)`;
  return c.restored
    ? `${found}: restored, the node is in service`
    : `${found}: left as it is, the node is not in service; \`drainer restore --node ${node}\` undoes it`;
};

/** Looks, acts and tells; answers false when a plugin could not look (look again at the next pass). */
export async function checkStranded(run: NodeRun, inService: boolean): Promise<boolean> {
  const { found, failed } = (await run.deps.host.stranded?.(
    { name: run.nodeName },
    { signal: run.signal, inService, dryRun: run.deps.config.dryRun, log: run.log },
  )) ?? { found: [], failed: [] };
  const at = run.now().toISOString();
  const had = strandedNotes(run.node.metadata?.annotations?.[STRANDED_ANNOTATION]);
  for (const { plugin, change } of found) {
    const text = eventText(run.nodeName, plugin, change);
    const fields = { plugin, what: change.what, restored: change.restored };
    if (change.restored) run.log.info(fields, text);
    else run.log.warn(fields, text);
    await run.event(change.restored ? 'Normal' : 'Warning', 'StrandedService', text);
  }
  // kept: what was found now, and what was restored lately (status shows it for a day)
  const recent = had.filter((n) => n.restored && Date.parse(n.at) + RESTORED_SHOWN_MS > run.now().getTime());
  const notes = [...found.map(({ plugin, change }) => ({ plugin, ...change, at })), ...recent];
  const text = notes.length ? JSON.stringify(notes) : null;
  if (text !== (run.node.metadata?.annotations?.[STRANDED_ANNOTATION] ?? null))
    await run.deps.cluster.setNodeAnnotation(run.nodeName, STRANDED_ANNOTATION, text);
  return failed.length === 0;
}
