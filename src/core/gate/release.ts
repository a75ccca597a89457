// `drainer release --node X`: the operator's override of a held drain gate (e.g. a Failed
// evacuation whose last VM the operator has dealt with). Recorded on the Node first
// (drainer.dev/gate-released, beside the record), so every agent keeps the gate released until
// the node is restored; then the gate pod goes.
import type { Config } from '../../config/schema.ts';
import { ConfigError, isNotFoundError } from '../../errors.ts';
import type { KubeClients } from '../../kube/client.ts';
import { EventRecorder } from '../../kube/events.ts';
import { GATE_RELEASED_ANNOTATION, gateName } from '../../kube/gate.ts';
import { getNode, setAnnotation } from '../../kube/node.ts';
import type { Logger } from '../../observability/logger.ts';
import { createDrainGate } from '../node-agent.ts';
import { nodeRef } from '../objects.ts';
import { parseRecord, STATE_ANNOTATION } from '../record.ts';
import { releasedAt } from './step.ts';

export interface ReleaseOptions {
  readonly k: KubeClients;
  readonly config: Config;
  readonly node: string;
  readonly log: Logger;
  readonly now?: () => Date;
}

/** Releases the node's gate; answers the lines to print. Bad input (no node, no record) throws ConfigError. */
export async function releaseGateNow(o: ReleaseOptions): Promise<string[]> {
  const now = o.now?.() ?? new Date();
  const bad = (message: string) => new ConfigError([{ path: 'node', message }]);
  const node = await getNode(o.k, o.node).catch((err: unknown) => {
    throw isNotFoundError(err) ? bad(`node ${o.node} does not exist in the cluster`) : err;
  });
  const record = parseRecord(node.metadata.annotations?.[STATE_ANNOTATION], now);
  if (!record)
    throw bad(
      `node ${o.node} is in service (no drainer record): its gate opens once the node is cordoned and evacuated; to drop it anyway delete PodDisruptionBudget ${o.config.fleet.namespace}/${gateName(o.node)}`,
    );
  const gate = createDrainGate({ ...o, config: { ...o.config, dryRun: false } });
  if (!gate) return [`drainGate.enabled is false: node ${o.node} has no drain gate`];
  if (releasedAt(node) === undefined)
    await setAnnotation(o.k, o.node, GATE_RELEASED_ANNOTATION, now.toISOString());
  await gate.set(o.node, false);
  await new EventRecorder({ k: o.k, log: o.log })
    .record(
      nodeRef(node, o.node),
      'Warning',
      'DrainGateReleased',
      `drain gate released by an operator (drainer release) while ${record.phase}: drains of ${o.node} go on`,
    )
    .catch((err: unknown) => o.log.warn({ err }, 'could not record Event'));
  return [
    `node ${o.node}: drain gate ${o.config.fleet.namespace}/${gateName(o.node)} released (phase ${record.phase})`,
    'it stays released until the node is restored (uncordon or NodeMaintenance deleted)',
  ];
}
