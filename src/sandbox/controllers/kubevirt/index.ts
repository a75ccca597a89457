// The KubeVirt simulation: virt-controller (VM run strategies, VMI lifecycle, evacuation, migrations) and virt-api's
// eviction interceptor, registered on the API server while the controller runs.
import { Timers, createLoop, watchAll } from '../loop.ts';
import { RES } from '../store.ts';
import type { StartController } from '../types.ts';
import { migrationCreateAdmitter } from './admission.ts';
import { kubevirtEvictionHook } from './eviction-hook.ts';
import { kubevirtSubresources } from './subresources.ts';
import { createEvacuationController } from './evacuation.ts';
import { reconcileVmis } from './lifecycle.ts';
import { createMigrationController } from './migration.ts';
import { MigrationHistory } from './virt-deps.ts';
import { reconcileVms } from './vm-controller.ts';

export { MigrationHistory } from './virt-deps.ts';

/** Adds `item` to the API server's list until the signal aborts. */
function lend<T>(list: T[] | undefined, item: T, signal: AbortSignal): void {
  if (!list) return;
  list.push(item);
  signal.addEventListener(
    'abort',
    () => {
      const i = list.indexOf(item);
      if (i >= 0) list.splice(i, 1);
    },
    { once: true },
  );
}

/** Starts the KubeVirt simulation; pass a MigrationHistory to observe concurrency and failures. */
export function startKubevirtWith(history: MigrationHistory): StartController {
  return ({ store, clock, timings, evictionHooks, createHooks, extensions, log }, signal) => {
    const onError = (e: unknown) => log?.warn({ err: e }, 'sandbox kubevirt controller');
    const timers = new Timers((ms, fn) => clock.after(ms, fn), signal, onError);
    const loop = createLoop(
      () => {
        reconcileVms(store);
        reconcileVmis(store, clock, (key, ms) => timers.set(key, ms, wake));
        migrations.reconcile();
        evacuation.reconcile();
      },
      signal,
      onError,
    );
    const wake = () => loop.trigger();
    const deps = { store, clock, timings, history, wake, onError };
    const migrations = createMigrationController(deps, signal);
    const evacuation = createEvacuationController(deps, signal);

    watchAll(
      (r, fn) => store.subscribe(r, fn),
      [RES.vmis, RES.vms, RES.pods, RES.nodes, RES.kubevirts],
      loop,
      signal,
    );
    const off = store.subscribe(RES.vmims, (type, obj) => {
      if (type === 'DELETED')
        setImmediate(() => {
          try {
            migrations.onDeleted(obj);
          } catch (e) {
            onError(e);
          }
        });
      loop.trigger();
    });
    signal.addEventListener('abort', off, { once: true });

    // virt-api's webhooks and subresources, served by the API server while KubeVirt runs
    lend(evictionHooks, kubevirtEvictionHook(store, wake), signal);
    lend(createHooks, migrationCreateAdmitter(store), signal);
    lend(extensions, kubevirtSubresources(store), signal);
    loop.trigger();
  };
}
