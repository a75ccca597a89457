// The fleet tools' timeouts compared when a maintenance starts (issue 50 item 2): once per record
// (its first look as Queued or Evacuating), the agent plans the node as `drainer plan` does and
// warns with an Event on the Node of each tool that would delete it with VMs on it. It only reads;
// a failure to find out is a log line (plan says more).
import type { Config } from '../../config/schema.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Plan } from '../backends/plugin.ts';
import type { NodeObject } from '../cluster/objects.ts';
import { parseRecord, recordId, STATE_ANNOTATION } from '../record/record.ts';

export interface TimeoutWarnerOptions {
  readonly nodeName: string;
  readonly config: Config;
  readonly log: Logger;
  /** The node's plans now (no capacity check). */
  plans(signal: AbortSignal): Promise<readonly Plan[]>;
  /**
   * timeoutWarnings(k, node, plans, config) on a real cluster: plans only asked for where a tool
   * has a timeout; `node` as the agent's watch brought it (its labels are not read again).
   */
  warnings(plans: () => Promise<readonly Plan[]>, node: NodeObject): Promise<string[]>;
  warn(message: string): Promise<void>;
  readonly signal: AbortSignal;
}

export class TimeoutWarner {
  readonly #o: TimeoutWarnerOptions;
  #checked: string | undefined;

  constructor(o: TimeoutWarnerOptions) {
    this.#o = o;
  }

  onNode(node: NodeObject | undefined): void {
    const record = parseRecord(node?.metadata?.annotations?.[STATE_ANNOTATION]);
    if (!node || !record || (record.phase !== 'Queued' && record.phase !== 'Evacuating')) return;
    const id = recordId(record);
    if (this.#checked === id) return;
    this.#checked = id;
    void this.#check(node).catch((err: unknown) =>
      this.#o.log.warn({ err }, 'could not compare the fleet tools timeouts with the evacuation'),
    );
  }

  async #check(node: NodeObject): Promise<void> {
    for (const w of await this.#o.warnings(() => this.#o.plans(this.#o.signal), node)) {
      this.#o.log.warn({ node: this.#o.nodeName }, w);
      await this.#o.warn(w);
    }
  }
}
