// Plan lines, per-VMI progress for what the plugin does not migrate, and the final Outcome.
import type { Outcome, PlannedWorkload, WorkloadProgress } from '../../core/backends/plugin.ts';
import type { Classified } from './classify.ts';
import { podRef, podsOfVmis } from './pods.ts';
import type { PodLite } from './types.ts';
import { MAINTENANCE_ANNOTATION } from './policy.ts';
import { MIGRATION_MODE_KEY } from '../../names.ts';
import { presenceField, vmiPresence } from '../on-host.ts';

export function planned(c: Classified, notifyTimeout: number): PlannedWorkload {
  return {
    id: c.vmi.metadata.uid ?? c.key,
    name: c.key,
    owner: c.vmi.metadata.namespace ?? 'default',
    state: c.vmi.status?.phase ?? 'Unknown',
    ...presenceField(vmiPresence(c.vmi.status?.phase)),
    action: c.action,
    ...(c.action === 'none'
      ? { blocker: c.reason ?? 'not live-migratable' }
      : { why: whyOf(c, notifyTimeout) }),
  };
}

/** Node mode manual: drainer moves nothing; someone else empties the node while the gate holds. */
export function plannedManual(c: Classified, node: string): PlannedWorkload {
  return {
    ...planned(c, 0),
    action: 'external',
    why: `node ${node} ${MIGRATION_MODE_KEY}=manual: moved by someone else; the drain waits until no VMI is left on the node`,
  };
}

/** Where a VMI's way out comes from: its (or its VirtualMachine's) annotation, its eviction strategy, the config. */
function whyOf(c: Classified, notifyTimeout: number): string {
  const m = c.maintenance;
  const chosen =
    'policy' in m && m.from !== 'default'
      ? `${m.from} annotation ${MAINTENANCE_ANNOTATION}=${m.policy}`
      : undefined;
  switch (c.klass) {
    case 'halt':
      return `${chosen ?? 'stop'}: drainer stops it on the node and starts it again on restore`;
    case 'notify':
      return `${chosen ?? 'notify'}: its owner is asked to move it; after kubevirt.notifyTimeout (${notifyTimeout}s) drainer has it live-migrated`;
    case 'migrate': {
      const how =
        c.strategy === 'External'
          ? 'evictionStrategy External: drainer creates its migration once KubeVirt marks it (kubevirt.external: migrate)'
          : `evictionStrategy ${c.strategy}${c.vmi.spec?.evictionStrategy ? '' : " (the KubeVirt CR's)"}: KubeVirt live-migrates it`;
      return chosen ? `${chosen}; ${how}` : how;
    }
    case 'external':
      return 'evictionStrategy External (kubevirt.external: mark): drainer has KubeVirt mark it; its own controller takes it off the node, and the drain waits for that';
    case 'stop':
      return `${because(c)}: left to the pod drain, which stops it`;
    case 'blocked':
      return `kubevirt.nonMigratable: ${c.action === 'skip' ? 'skip' : 'shutdown'}: ${because(c)}`;
  }
}

const because = (c: Classified): string => c.reason ?? 'not live-migratable';

/** The state of a VMI drainer does not migrate itself (before any shutdown of it). */
export function staticProgress(c: Classified): WorkloadProgress {
  const line = (state: WorkloadProgress['state'], message: string): WorkloadProgress => ({
    id: c.vmi.metadata.uid ?? c.key,
    name: c.key,
    state,
    action: c.action,
    attempts: 0,
    ...(c.vmi.status?.nodeName ? { source: c.vmi.status.nodeName } : {}),
    message,
  });
  if (c.klass === 'external')
    return line('skipped', 'evictionStrategy External: its own controller moves it');
  if (c.klass === 'stop') return line('skipped', `left to the pod drain, which stops it (${because(c)})`);
  if (c.klass === 'halt') return line('pending', `to be stopped (${because(c)})`);
  if (c.action === 'none') return line('blocked', because(c));
  if (c.action === 'skip') return line('skipped', `left running (nonMigratable: skip): ${because(c)}`);
  return line('pending', `to be stopped (nonMigratable: shutdown): ${because(c)}`);
}

/** Anything still pending or migrating when the plugin returns did not make it. */
export function finalize(
  items: readonly WorkloadProgress[],
  stopped: string | undefined,
): WorkloadProgress[] {
  return items.map((w) =>
    w.state === 'pending' || w.state === 'migrating'
      ? { ...w, state: 'failed', message: stopped ?? w.message ?? 'did not finish in time' }
      : w,
  );
}

/** The pods the pod drain must leave alone: every VMI's except those it is meant to stop. */
export function handledPods(classified: readonly Classified[], pods: readonly PodLite[]) {
  const uids = new Set(classified.filter((c) => c.klass !== 'stop').flatMap((c) => c.vmi.metadata.uid ?? []));
  return podsOfVmis(pods, uids).map(podRef);
}

export function outcomeOf(
  plugin: string,
  workloads: readonly WorkloadProgress[],
  handled: Outcome['handledPods'],
): Outcome {
  const problems = workloads.flatMap((w) =>
    w.state === 'blocked'
      ? [`${w.name} cannot migrate (${w.message ?? 'not live-migratable'})`]
      : w.state === 'failed'
        ? [`${w.name} did not migrate (${w.message ?? 'failed'})`]
        : [],
  );
  return {
    plugin,
    succeeded: problems.length === 0,
    workloads,
    handledPods: handled ?? [],
    ...(problems.length ? { message: problems.join('; ') } : {}),
  };
}

/** Dry run: what would happen, nothing changed. */
export function dryRunProgress(c: Classified, manual: boolean): WorkloadProgress {
  const p = staticProgress(c);
  if (manual)
    return {
      ...p,
      action: 'external',
      state: 'skipped',
      message: 'dry run: would wait for someone else to move it',
    };
  if (c.klass === 'notify')
    return {
      ...p,
      state: 'skipped',
      message: 'dry run: would ask its owner to move it, then live-migrate it',
    };
  return c.klass === 'migrate' ? { ...p, state: 'skipped', message: 'dry run: would live-migrate' } : p;
}
