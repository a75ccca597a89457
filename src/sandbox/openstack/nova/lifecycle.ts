// What a server's owner does to it, taking the time it takes in Nova (docs/sandbox.md, "Owners"):
// os-stop and os-start, shelve (offloaded at once with Nova's default shelved_offload_time 0),
// unshelve, delete. The API sets task_state before it answers 202 (nova/compute/api.py); the
// compute manager ends the task later (nova/compute/manager.py), so a second action meanwhile is
// refused 409 like Nova's check_instance_state.
import type { Clock } from '../../clock.ts';
import type { ComputeTimings } from '../types.ts';
import type { ComputeNode, NovaModel, Server } from './model.ts';

/** The scheduler and the migrations a deleted server leaves (ComputeSim). */
export interface LifecyclePorts {
  pickDestination(server: Server, requested: string | null): ComputeNode | undefined;
  /** The server is gone: its migrations end. */
  forget(server: Server): void;
}

export class Lifecycle {
  readonly #model: NovaModel;
  readonly #clock: Clock;
  readonly #t: ComputeTimings;
  readonly #ports: LifecyclePorts;
  readonly #timers = new Set<() => void>();

  constructor(model: NovaModel, clock: Clock, timings: ComputeTimings, ports: LifecyclePorts) {
    this.#model = model;
    this.#clock = clock;
    this.#t = timings;
    this.#ports = ports;
  }

  close(): void {
    for (const cancel of this.#timers) cancel();
    this.#timers.clear();
  }

  #after(ms: number, fn: () => void): void {
    const cancel = this.#clock.after(ms, () => {
      this.#timers.delete(cancel);
      fn();
    });
    this.#timers.add(cancel);
  }

  /** A task the compute manager ends later, unless the server was deleted meanwhile. */
  #task(server: Server, task: string, ms: number, end: () => void, changes: Partial<Server> = {}): void {
    this.#model.setServer(server, { ...changes, taskState: task });
    this.#after(ms, () => {
      if (server.vmState === 'deleted' || server.taskState !== task) return;
      end();
    });
  }

  /**
   * os-stop: task_state powering-off, then the guest has up to shutdown_timeout (60 s) to power
   * off cleanly before it is destroyed (manager.py _power_off_instance): its shutdownMs.
   */
  stop(server: Server): void {
    this.#task(server, 'powering-off', this.#shutdownMs(server), () =>
      this.#model.setServer(server, { vmState: 'stopped', powerState: 4, taskState: null }),
    );
  }

  /** os-start: task_state powering-on, then ACTIVE (manager.py start_instance). */
  start(server: Server): void {
    this.#task(server, 'powering-on', this.#t.powerOnMs, () =>
      this.#model.setServer(server, { vmState: 'active', powerState: 1, taskState: null }),
    );
  }

  /**
   * shelve: shelving (a clean power-off as os-stop), the snapshot (the driver's update_task_state:
   * shelving_image_pending_upload, then shelving_image_uploading), then SHELVED; with
   * shelved_offload_time 0 (Nova's default) SHELVED with shelving_offloading in the same save, and
   * offloaded at once: the host and node are cleared (manager.py _shelve_instance →
   * _shelve_offload_instance).
   */
  shelve(server: Server): void {
    const off = server.vmState === 'active' ? this.#shutdownMs(server) : 0;
    const half = this.#t.snapshotMs / 2;
    this.#task(server, 'shelving', off, () =>
      this.#task(server, 'shelving_image_pending_upload', half, () =>
        this.#task(server, 'shelving_image_uploading', half, () => this.#shelved(server)),
      ),
    );
  }

  #shelved(server: Server): void {
    const shelved = { vmState: 'shelved', powerState: 4 };
    const wait = this.#t.shelvedOffloadMs;
    if (wait === 0) {
      this.offload(server, shelved);
      return;
    }
    this.#model.setServer(server, { ...shelved, taskState: null });
    if (wait > 0)
      this.#after(wait, () => {
        if (server.vmState === 'shelved' && server.taskState === null) this.offload(server);
      });
  }

  /** shelveOffload (or the offload after shelve): the instance leaves its host. */
  offload(server: Server, changes: Partial<Server> = {}): void {
    this.#task(
      server,
      'shelving_offloading',
      this.#t.powerOnMs,
      () =>
        this.#model.setServer(server, {
          vmState: 'shelved_offloaded',
          taskState: null,
          host: null,
          node: null,
          // the judge's memory of where it ran (no migration says it left)
          ...(server.host
            ? {
                offloaded: {
                  from: server.host,
                  at: this.#clock.now(),
                  ...(server.placedAt !== undefined ? { since: server.placedAt } : {}),
                },
              }
            : {}),
        }),
      changes,
    );
  }

  /**
   * unshelve: unshelving, then spawning on the host (manager.py _unshelve_instance), then ACTIVE. A
   * shelved server starts where it is; an offloaded one goes through the scheduler first (conductor
   * unshelve_instance), so never onto a disabled host, and has its host again from the claim on; no
   * host: back to SHELVED_OFFLOADED with a fault.
   */
  unshelve(server: Server): void {
    const half = this.#t.powerOnMs / 2;
    const spawn = (changes: Partial<Server> = {}) =>
      this.#task(
        server,
        'spawning',
        half,
        () => this.#model.setServer(server, { vmState: 'active', powerState: 1, taskState: null }),
        changes,
      );
    this.#task(server, 'unshelving', half, () => {
      if (server.vmState === 'shelved') {
        spawn();
        return;
      }
      const dest = this.#ports.pickDestination(server, null);
      if (!dest) {
        this.#model.setServer(server, { taskState: null, fault: 'No valid host was found. ' });
        return;
      }
      spawn({ host: dest.serviceHost, node: dest.hostname, placedAt: this.#clock.now() });
    });
  }

  /** DELETE /servers/{id}: task_state deleting, then DELETED (listed by changes-since only). */
  delete(server: Server): void {
    this.#model.setServer(server, { taskState: 'deleting' });
    this.#after(this.#t.deleteMs, () => {
      this.#ports.forget(server);
      this.#model.setServer(server, { vmState: 'deleted', taskState: null, powerState: 0 });
    });
  }

  #shutdownMs(server: Server): number {
    return server.shutdownMs ?? this.#t.shutdownMs;
  }
}
