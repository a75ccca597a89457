// When the agent looks for drainer's changes stranded on its node with no record (restore/stranded-check.ts):
// once per Node object (its uid: at the agent's start and when the Node is registered anew), and again
// every strandedCheckInterval while the node has no record. The second look finds what came later: a
// server drainer stopped and marked elsewhere, whose record was lost with its Node, that its owner then
// moved here cold; nothing else would ever start it. Each look costs the cloud a request or two.
import { checkStranded } from '../restore/stranded-check.ts';
import type { NodeRun } from './run-context.ts';

export class StrandedLooks {
  readonly #seen = new Map<string, { uid: string; at: number }>();
  readonly #intervalMs: number;
  readonly #now: () => number;

  /** `intervalSeconds` 0: once per Node object only. */
  constructor(intervalSeconds: number, now: () => number) {
    this.#intervalMs = intervalSeconds * 1000;
    this.#now = now;
  }

  /**
   * Looks if due. Answers false when put off until the gate holds: giving a service back lets servers
   * land, so only under a gate that holds, that a drain right after it waits for them (a Node
   * registered anew comes up before its gate pod does). Not waited for here: the pass would hold up
   * a cordon behind it. A plugin that could not look (its cloud down) is asked again at the next pass.
   */
  async look(run: NodeRun, inService: boolean): Promise<boolean> {
    const uid = run.node.metadata?.uid ?? '';
    const seen = this.#seen.get(run.nodeName);
    const now = this.#now();
    if (seen?.uid === uid && (this.#intervalMs <= 0 || now - seen.at < this.#intervalMs)) return true;
    if (inService && run.deps.gate && !(await run.deps.gate.whenHeld(run.nodeName, 0))) return false;
    if (await checkStranded(run, inService)) this.#seen.set(run.nodeName, { uid, at: now });
    return true;
  }
}
