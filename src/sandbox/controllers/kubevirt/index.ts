// The KubeVirt simulation: virt-controller (VMI lifecycle, evacuation, migrations) and virt-api's
// eviction interceptor, registered on the API server while the controller runs.
import { createLoop, watchAll } from '../loop.ts';
import { RES } from '../store.ts';
import type { StartController } from '../types.ts';
import { kubevirtEvictionHook } from './eviction-hook.ts';
import { createEvacuationController } from './evacuation.ts';
import { reconcileVmis } from './lifecycle.ts';
import { createMigrationController, MigrationHistory } from './migration.ts';

export { MigrationHistory } from './migration.ts';

/** Starts the KubeVirt simulation; pass a MigrationHistory to observe concurrency and failures. */
export function startKubevirtWith(history: MigrationHistory): StartController {
  return ({ store, clock, timings, evictionHooks, log }, signal) => {
    const onError = (e: unknown) => log?.warn({ err: e }, 'sandbox kubevirt controller');
    const loop = createLoop(
      () => {
        reconcileVmis(store, clock);
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

    watchAll((r, fn) => store.subscribe(r, fn), [RES.vmis, RES.pods, RES.nodes, RES.kubevirts], loop, signal);
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

    if (evictionHooks) {
      const hook = kubevirtEvictionHook(store, wake);
      evictionHooks.push(hook);
      signal.addEventListener(
        'abort',
        () => {
          const i = evictionHooks.indexOf(hook);
          if (i >= 0) evictionHooks.splice(i, 1);
        },
        { once: true },
      );
    }
    loop.trigger();
  };
}
