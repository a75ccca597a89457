// The checks' options from drainer's configuration (the same config the agents run with).
import type { Config } from '../config/schema.ts';
import { slotCount } from '../core/fleet/budget.ts';
import type { CheckOptions } from './world.ts';
import { deadlinesOf } from '../core/capi/timeouts.ts';

/** `agents`: how many nodes run the agent (a percentage budget is of them). */
export const checkOptionsOf = (
  config: Config,
  agents: number,
  more: Partial<CheckOptions> = {},
): CheckOptions => ({
  disabledReasonPrefix: config.nova.disabledReasonPrefix,
  budget: slotCount(config.fleet.maxConcurrentEvacuations, agents),
  namespace: config.fleet.namespace,
  gate: config.drainGate.enabled,
  ownsMaintenances: config.nodeMaintenance.mode === 'own',
  agentLeaseDuration: config.fleet.agentLeaseDuration,
  hostMapping: config.nova.hostMapping,
  deadlines: deadlinesOf(config),
  ...(config.shutdown.enabled
    ? {
        shutdown: {
          rateMiBps: config.shutdown.migrationRate,
          atOnce: config.nova.maxConcurrentMigrations,
          marginSeconds: config.shutdown.releaseMargin,
        },
      }
    : {}),
  ...more,
});
