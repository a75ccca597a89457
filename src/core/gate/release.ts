// `drainer release --node X`: the operator's override of a held drain gate (e.g. a Failed
// evacuation whose last VM the operator has dealt with). Recorded on the Node first
// (drainer.dev/gate-released, beside the record), so every agent keeps the gate released until
// the node is restored; then the gate pod goes.
import { ConfigError, isNotFoundError, UnknownNodeError } from '../../errors.ts';
import { EventRecorder } from '../../kube/events.ts';
import { GATE_RELEASED_ANNOTATION, gateName } from '../../kube/gate.ts';
import { getNode, setAnnotation } from '../../kube/node.ts';
import { createDrainGate } from '../agent/node-agent.ts';
import { nodeRef } from '../cluster/objects.ts';
import { parseRecord, STATE_ANNOTATION } from '../record/record.ts';
import { releasedAt, releaseValue } from './step.ts';
import { anyLeft, remainingText } from './remaining.ts';
import { releaseKeeperless } from './release-keeperless.ts';
import type { ReleaseOptions, ReleaseResult } from './release-api.ts';

export { remainingText, type Remaining } from './remaining.ts';
export type { ReleaseOptions, ReleaseResult } from './release-api.ts';

/**
 * Releases the node's gate, unless VMs remain and `force` is not given. Bad input (no such node,
 * no record) throws ConfigError.
 */
export async function releaseGateNow(o: ReleaseOptions): Promise<ReleaseResult> {
  const now = o.now?.() ?? new Date();
  const node = await getNode(o.k, o.node).catch((err: unknown) => {
    throw isNotFoundError(err) ? new UnknownNodeError(o.node, { cause: err }) : err;
  });
  const record = parseRecord(node.metadata.annotations?.[STATE_ANNOTATION], now);
  // no record, and no agent there nor coming: nobody else will ever open the gate
  const keeperless = record ? undefined : await releaseKeeperless(o, now);
  if (keeperless) return keeperless;
  if (!record)
    throw new ConfigError([
      {
        path: '', // the message names the node: no "node: node …" stutter
        message: `node ${o.node} is in service (no drainer record): its gate opens once the node is cordoned and evacuated; to drop it anyway delete PodDisruptionBudget ${o.config.fleet.namespace}/${gateName(o.node)}`,
      },
    ]);
  const gate = createDrainGate({ ...o, config: { ...o.config, dryRun: false } });
  if (!gate)
    return { released: true, lines: [`drainGate.enabled is false: node ${o.node} has no drain gate`] };
  const restore = `restore the node (kubectl uncordon ${o.node}, or delete its NodeMaintenance)`;
  if (record.phase === 'Restoring')
    throw new ConfigError([
      {
        path: 'node',
        message: `node ${o.node} is being restored (it takes VMs again): its drain gate is held and is not released`,
      },
    ]);
  const since = releasedAt(record, node);
  if (since !== undefined) {
    await gate.set(o.node, false); // idempotent: makes sure it is
    return {
      released: true,
      lines: [`node ${o.node}: drain gate released already (at ${since}); to re-arm it, ${restore}`],
    };
  }
  const left = (await o.remaining?.()) ?? { names: [] };
  const some = anyLeft(left);
  const rearm = `to re-arm it, ${restore}`;
  if (some && !o.force)
    return {
      released: false,
      lines: [
        `node ${o.node} still has ${remainingText(left)} on the host: not released, as a drain that goes on (and the reboot or deletion after it) takes them down`,
        `move them first, or release anyway: drainer release --node ${o.node} --force`,
      ],
    };
  // bound to this record: it ends with this maintenance, and no later one honours it
  await setAnnotation(o.k, o.node, GATE_RELEASED_ANNOTATION, releaseValue(record, now));
  await gate.set(o.node, false);
  const what = some ? `with ${remainingText(left)} still on the host` : 'with no VM left on the host';
  await new EventRecorder({ k: o.k, log: o.log })
    .record(
      nodeRef(node, o.node),
      'Warning',
      'DrainGateReleased',
      `drain gate released by an operator (drainer release${o.force ? ' --force' : ''}) while ${record.phase}, ${what}: drains of ${o.node} go on`,
    )
    .catch((err: unknown) => o.log.warn({ err }, 'could not record Event'));
  return {
    released: true,
    lines: [
      `node ${o.node}: drain gate ${o.config.fleet.namespace}/${gateName(o.node)} released (phase ${record.phase}) ${what}; the drain goes on now`,
      `it stays released until the node is restored: ${rearm}`,
    ],
  };
}
