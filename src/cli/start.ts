// `drainer start <node>` (also `kubectl drainer start`): cordon the node, so its agent evacuates it
// when windows, freezes, blockers and the budget allow. With --now it also sets
// drainer.dev/start-now ({by, at}), which the agent honours once: past windows, freezes and
// blockers (the budget still applies), with who and when in the record. One Node write.
import { hostname, userInfo } from 'node:os';
import type { Argv, CommandModule } from 'yargs';
import { kubeTarget } from '../config/kube-target.ts';
import { isNotFoundError, UnknownNodeError } from '../errors.ts';
import { START_NOW_ANNOTATION, startNowValue } from '../core/fleet/start-now.ts';
import { createKubeClients, type KubeClients } from '../kube/client.ts';
import { MERGE_PATCH } from '../kube/http.ts';
import { getNode } from '../kube/node.ts';
import { parseRecord, resumes, STATE_ANNOTATION } from '../core/record/record.ts';
import { targetOptions } from '../kube/target-options.ts';
import { type GlobalArgs, handle, loadCliConfig } from './context.ts';

interface StartArgs extends GlobalArgs {
  node: string;
  now: boolean;
  by?: string;
}

/** Who asks: --by, else the local user at this host (the record and an Event show it). */
function asker(by: string | undefined): string {
  if (by) return by;
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return `unknown@${hostname()}`;
  }
}

/**
 * Cordons the node; with `now`, asks its agent to start it now, bound to the node's record if it
 * has one (a start-now belongs to one maintenance). Answers false when --now was moot: the
 * evacuation began already (then only the cordon is written).
 */
export async function startNode(
  k: KubeClients,
  o: { node: string; now: boolean; by: string; at: Date },
): Promise<boolean> {
  const unknown = (err: unknown) => {
    throw isNotFoundError(err) ? new UnknownNodeError(o.node, { cause: err }) : err;
  };
  const rec = o.now
    ? parseRecord((await getNode(k, o.node).catch(unknown)).metadata.annotations?.[STATE_ANNOTATION], o.at)
    : undefined;
  const ask = o.now && !(rec && (resumes(rec) || rec.phase === 'Evacuated' || rec.phase === 'Restoring'));
  // a merge patch of a Node that is not there is a 404: the same line as every other command
  await k
    .request({
      method: 'PATCH',
      path: `/api/v1/nodes/${encodeURIComponent(o.node)}`,
      contentType: MERGE_PATCH,
      body: {
        spec: { unschedulable: true },
        ...(ask
          ? { metadata: { annotations: { [START_NOW_ANNOTATION]: startNowValue(o.by, o.at, rec) } } }
          : {}),
      },
    })
    .catch(unknown);
  return ask === o.now;
}

export const command: CommandModule<GlobalArgs, StartArgs> = {
  command: 'start <node>',
  describe:
    'cordon the node so drainer evacuates it; --now: past windows, freezes and blockers (not the budget)',
  builder: (y: Argv<GlobalArgs>) =>
    y
      .positional('node', { type: 'string', demandOption: true, describe: 'the node to evacuate' })
      .option('now', {
        type: 'boolean',
        default: false,
        describe: `start at once, past maintenance windows, freezes and blockers (sets ${START_NOW_ANNOTATION})`,
      })
      .option('by', {
        type: 'string',
        describe: 'who asks, for the record (default: user@host)',
      }),
  handler: handle(async (argv) => {
    const config = await loadCliConfig(argv);
    const { io } = argv.cli;
    const k = createKubeClients({ ...targetOptions(kubeTarget(config, io.env)), homeDir: io.homeDir });
    const by = asker(argv.by);
    const asked = await startNode(k, { node: argv.node, now: argv.now, by, at: new Date() });
    io.stdout.write(
      !asked
        ? `node ${argv.node} cordoned; its evacuation began already: --now has nothing left to start\n`
        : argv.now
          ? `node ${argv.node} cordoned; its agent starts it now, past windows, freezes and blockers (asked by ${by})\n`
          : `node ${argv.node} cordoned; its agent starts it when windows, freezes, blockers and the budget allow\n`,
    );
    return 0;
  }),
};
