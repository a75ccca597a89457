// One node's drain gate as a wanted state. Calls are applied one at a time and each applies the
// newest wish, so an arm at start that is slow cannot land after the release at Evacuated. Every
// call is applied even when the gate should already be so: an operator may have deleted the PDB
// or the pod (the documented override), and a restore must put them back.
import type { Logger } from '../../observability/logger.ts';
import type { GateApi } from './api.ts';

export interface DrainGateOptions {
  readonly api: GateApi;
  /** The gate pod of a node (drainer's own pod drain leaves it alone). */
  readonly podOf: (node: string) => { readonly namespace: string; readonly name: string };
  readonly log: Logger;
  /** drainer_drain_gate_held: 1 held, 0 released (after the change is made). */
  readonly onHeld?: (held: boolean) => void;
}

export class DrainGate {
  readonly #o: DrainGateOptions;
  readonly #want = new Map<string, boolean>();
  /** What the last successful apply made; absent: unknown (at start, or after a failure). */
  readonly #made = new Map<string, boolean>();
  #chain: Promise<void> = Promise.resolve();

  constructor(o: DrainGateOptions) {
    this.#o = o;
  }

  /** Held (true) or released; resolves once the newest wish for the node is in place. Throws API errors. */
  set(node: string, held: boolean): Promise<void> {
    this.#want.set(node, held);
    const run = this.#chain.then(() => this.#apply(node));
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /** Is this the node's gate pod? */
  isGatePod(node: string, pod: { namespace: string; name: string }): boolean {
    const gate = this.#o.podOf(node);
    return pod.namespace === gate.namespace && pod.name === gate.name;
  }

  /** The state last made (undefined: not yet known). */
  held(node: string): boolean | undefined {
    return this.#made.get(node);
  }

  async #apply(node: string): Promise<void> {
    const want = this.#want.get(node) ?? true;
    this.#made.delete(node);
    if (want) await this.#o.api.hold(node);
    else if (await this.#o.api.release(node)) this.#o.log.info({ node }, 'drain gate released');
    this.#made.set(node, want);
    this.#o.onHeld?.(want);
  }
}
