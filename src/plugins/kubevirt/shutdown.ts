// nonMigratable: shutdown. KubeVirt refuses the eviction of a LiveMigrate VMI that cannot migrate
// (429 for ever), so the pod drain could never stop it: the plugin deletes its launcher pod instead,
// as a node shutdown would, and waits until the VMI has stopped.
import type { WorkloadProgress } from '../../core/backends/plugin.ts';
import type { Classified } from './classify.ts';
import { activeLauncher } from './pods.ts';
import { stopProgress, stoppedHere, type StopDeps } from './stopping.ts';

export async function shutDown(
  victims: readonly Classified[],
  deps: StopDeps,
  signal: AbortSignal,
): Promise<WorkloadProgress[]> {
  const { api, node, log, now } = deps;
  const started = now();
  const pods = await api.listVmPods(node, signal);
  for (const c of victims) {
    const pod = activeLauncher(pods, c.vmi.metadata.uid);
    if (!pod) continue;
    log.warn(
      { vmi: c.key, pod: pod.metadata.name },
      'stopping a VMI that cannot migrate (nonMigratable: shutdown)',
    );
    await api.deletePod(pod.metadata.namespace ?? 'default', pod.metadata.name, signal);
  }
  const left = new Set(victims.map((c) => c.key));
  while (left.size > 0 && !signal.aborted && now() - started <= deps.timeoutMs) {
    for (const c of victims.filter((v) => left.has(v.key))) {
      const vmi = await api.getVmi(c.vmi.metadata.namespace ?? 'default', c.vmi.metadata.name, signal);
      if (stoppedHere(vmi, node)) left.delete(c.key);
    }
    if (left.size > 0) await deps.sleep(deps.pollMs, signal);
  }
  return stopProgress(victims, left, started, deps, {
    failed: (c) => `did not stop after its launcher pod was deleted (${c.reason ?? ''})`,
    stopped: (c) => `stopped (nonMigratable: shutdown): ${c.reason ?? 'not live-migratable'}`,
  });
}
