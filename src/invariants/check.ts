// checkInvariants: every promise drainer makes, checked over one World. Pure: no I/O, no clock
// but the world's own time. Each rule says nothing where its evidence was not gathered.
import { recordsWithoutAgent, slotsOfDeadAgents } from './rules/agents.ts';
import { withinBudget } from './rules/budget.ts';
import { gateDisruptedWhileOccupied } from './rules/gate-disrupted.ts';
import { gatesHold, leftoverGates } from './rules/gate-held.ts';
import { stuckGates } from './rules/gate-stuck.ts';
import { maintenancesAgree } from './rules/maintenance.ts';
import { ownerActionReportedAsFailure } from './rules/owner-action-failure.ts';
import { drainerStopsUndone, ownerStopsUndone } from './rules/owners.ts';
import { migrationTruth } from './rules/migrations.ts';
import { unexpected4xx } from './rules/requests.ts';
import { strandedServices } from './rules/stranded.ts';
import { failuresOfCompletedMoves } from './rules/completed-moves.ts';
import { queueOrder } from './rules/fifo.ts';
import { gatesWithoutKeeper } from './rules/gate-keeper.ts';
import { stopMarksLeftStopped } from './rules/stop-marks.ts';
import { stopMarksWithoutAgent } from './rules/stop-mark-agent.ts';
import { machineHooksWithoutAgent } from './rules/machine-hook-agent.ts';
import { drainTimeoutsShort } from './rules/drain-timeouts.ts';
import { shutdownTimeShort } from './rules/shutdown-time.ts';
import { vmStopMarksWithoutAgent } from './rules/vm-stop-mark-agent.ts';
import { serversLeftInVerifyResize } from './rules/verify-resize.ts';
import type { Violation } from './violation.ts';
import type { CheckOptions, World } from './world.ts';

type Rule = (world: World, opts: CheckOptions) => Violation[];

export const RULES: readonly Rule[] = [
  gateDisruptedWhileOccupied,
  strandedServices,
  migrationTruth,
  gatesHold,
  leftoverGates,
  stuckGates,
  maintenancesAgree,
  unexpected4xx,
  withinBudget,
  recordsWithoutAgent,
  slotsOfDeadAgents,
  drainerStopsUndone,
  ownerStopsUndone,
  ownerActionReportedAsFailure,
  serversLeftInVerifyResize,
  stopMarksLeftStopped,
  stopMarksWithoutAgent,
  machineHooksWithoutAgent,
  drainTimeoutsShort,
  shutdownTimeShort,
  vmStopMarksWithoutAgent,
  failuresOfCompletedMoves,
  gatesWithoutKeeper,
  queueOrder,
];

export function checkInvariants(world: World, opts: CheckOptions): Violation[] {
  return RULES.flatMap((rule) => rule(world, opts));
}
