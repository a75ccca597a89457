// The agent's side of Cluster API's pre-drain hook (machine.ts decides, this acts): it watches the
// Machines through a small port (kube-port.ts on a real API server; another source can plug in),
// is told of every change of its Node by the agent, and takes one step at each look. A write's own
// watch event brings the next look; a failed write is looked at again after a pause.
import type { Logger } from '../../observability/logger.ts';
import type { WatchCallbacks } from '../agent/agent.ts';
import type { NodeObject } from '../cluster/objects.ts';
import { parseRecord, STATE_ANNOTATION } from '../record/record.ts';
import {
  hookStep,
  machineKey,
  machineOfNode,
  MACHINE_DELETING_ANNOTATION,
  type HookStep,
  type MachineObject,
} from './machine.ts';

export interface MachinePort {
  /** Watches Machines until the signal aborts (waiting for their CRD while Cluster API is absent). */
  /** `onAbsent`: Machines are not served (no Cluster API here); the watch waits for their CRD. */
  watch(cb: WatchCallbacks<MachineObject> & { onAbsent?(): void }): Promise<void>;
  /** Puts drainer's hook on the Machine (on) or takes it off; a Machine gone is no error. */
  setHook(m: MachineObject, on: boolean): Promise<void>;
  /** Sets (null: removes) an annotation of the Node. */
  annotateNode(node: string, key: string, value: string | null): Promise<void>;
  event(m: MachineObject, type: 'Normal' | 'Warning', reason: HookReason, message: string): Promise<void>;
}

export type HookReason = 'PreDrainHookHeld' | 'PreDrainHookRemoved';

export interface PreDrainHookOptions {
  readonly nodeName: string;
  readonly enabled: boolean;
  readonly port: MachinePort;
  readonly log: Logger;
  /** Between a failed write and the next look (default 5 s). */
  readonly retryMs?: number;
}

export class PreDrainHook {
  readonly #o: PreDrainHookOptions;
  readonly #machines = new Map<string, MachineObject>();
  #node: NodeObject | undefined;
  #synced = false;
  /** Machines are not served here (until their CRD appears and the watch syncs). */
  #absent = false;
  #running = false;
  #again = false;
  /** The failures already told (machine and record since): one Event per failed evacuation. */
  readonly #told = new Set<string>();
  #held: () => Promise<boolean> = () => Promise.resolve(true);
  #signal: AbortSignal | undefined;

  constructor(o: PreDrainHookOptions) {
    this.#o = o;
  }

  /** Runs until the signal aborts; acts only once `held` says the node's Lease is this agent's. */
  async watch(signal: AbortSignal, held?: () => Promise<boolean>): Promise<void> {
    this.#signal = signal;
    if (held) this.#held = held;
    await this.#o.port.watch({
      signal,
      onEvent: (type, m) => {
        if (type === 'DELETED') this.#machines.delete(machineKey(m));
        else this.#machines.set(machineKey(m), m);
        if (m.status?.nodeRef?.name === this.#o.nodeName) this.#look();
      },
      onAbsent: () => (this.#absent = true),
      onSynced: () => {
        this.#synced = true;
        this.#look();
      },
    });
  }

  /**
   * The node's Machine as the watch has it: null when the watch is synced and none names the node;
   * undefined before (not synced yet, or Machines not served): whoever needs it reads it.
   */
  machine(): MachineObject | null | undefined {
    if (this.#absent && !this.#synced) return null;
    if (!this.#synced) return undefined;
    return machineOfNode(this.#machines.values(), this.#o.nodeName) ?? null;
  }

  /** The agent's Node watch: every change may be the record's Evacuated or Failed. */
  onNode(node: NodeObject | undefined): void {
    this.#node = node;
    this.#look();
  }

  #look(): void {
    if (!this.#synced || this.#signal?.aborted) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    void this.#pass().finally(() => {
      this.#running = false;
      if (this.#again) {
        this.#again = false;
        this.#look();
      }
    });
  }

  async #pass(): Promise<void> {
    if (!(await this.#held())) return;
    const machine = machineOfNode(this.#machines.values(), this.#o.nodeName);
    const step = hookStep({ enabled: this.#o.enabled, node: this.#node, machine });
    if (step.kind === 'none' || !machine) return this.#unmarkWithoutMachine(step);
    try {
      await this.#act(step, machine);
    } catch (err) {
      this.#o.log.warn({ err, machine: machineKey(machine), step: step.kind }, 'Cluster API hook: retrying');
      setTimeout(() => this.#look(), this.#o.retryMs ?? 5000).unref();
    }
  }

  /** The one step that needs no Machine: the mark of a deletion whose Machine is gone. */
  async #unmarkWithoutMachine(step: HookStep): Promise<void> {
    if (step.kind !== 'mark' || step.value !== null) return;
    await this.#o.port
      .annotateNode(this.#o.nodeName, MACHINE_DELETING_ANNOTATION, null)
      .catch((err: unknown) => this.#o.log.warn({ err }, 'could not remove the Machine deletion mark'));
  }

  async #act(step: HookStep, machine: MachineObject): Promise<void> {
    const { port, log, nodeName } = this.#o;
    const key = machineKey(machine);
    switch (step.kind) {
      case 'add':
        await port.setHook(machine, true);
        log.info({ machine: key }, "Cluster API: drainer's pre-drain hook is on the node's Machine");
        return;
      case 'mark':
        await port.annotateNode(nodeName, MACHINE_DELETING_ANNOTATION, step.value);
        if (step.value)
          log.info({ machine: key }, 'Cluster API: the Machine is deleted, evacuating the node');
        return;
      case 'remove':
        await port.setHook(machine, false);
        log.info({ machine: key, why: step.why }, "Cluster API: drainer's pre-drain hook removed");
        await port.event(
          machine,
          'Normal',
          'PreDrainHookRemoved',
          `drainer's pre-drain hook removed from Machine ${key}: ${step.why}`,
        );
        return;
      case 'failed': {
        const since = parseRecord(this.#node?.metadata?.annotations?.[STATE_ANNOTATION])?.since ?? '';
        if (this.#told.has(`${key} ${since}`)) return;
        this.#told.add(`${key} ${since}`);
        log.warn({ machine: key }, step.message);
        await port.event(machine, 'Warning', 'PreDrainHookHeld', step.message);
        return;
      }
      default:
        return;
    }
  }
}
