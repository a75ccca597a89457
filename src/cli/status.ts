// `drainer status` (also `kubectl drainer status`): every node that has a drainer record, with its
// phase, trigger, age, fleet slot or queue position, per-plugin progress and last error. One list of
// Nodes; --watch keeps one Node watch open and redraws when what it shows changes.
import type { Argv, CommandModule } from 'yargs';
import { kubeTarget } from '../config/kube-target.ts';
import type { Config } from '../config/schema.ts';
import { fleetRows } from '../core/fleet-view.ts';
import type { NodeObject } from '../core/objects.ts';
import { createKubeClients, type KubeClients } from '../kube/client.ts';
import { targetOptions } from '../kube/target-options.ts';
import type { KubeNode } from '../kube/types.ts';
import { listAll, runWatch } from '../kube/watch.ts';
import {
  cliLogger,
  type CliIo,
  type GlobalArgs,
  handle,
  kubeHttp,
  loadCliConfig,
  quietUnlessAsked,
} from './context.ts';
import { renderStatus, type StatusOutput } from './status-render.ts';

interface StatusArgs extends GlobalArgs {
  output: StatusOutput;
  watch: boolean;
}

const NODES = '/api/v1/nodes';
/** Clears a terminal before a redraw (watch on a TTY); elsewhere snapshots follow one another. */
const CLEAR = '\x1b[H\x1b[2J';

function snapshot(nodes: Iterable<NodeObject>, output: StatusOutput, now: Date): string {
  return renderStatus(fleetRows([...nodes], now), output, now);
}

async function watchStatus(
  k: KubeClients,
  argv: StatusArgs,
  log: ReturnType<typeof cliLogger>,
  now: () => Date,
): Promise<void> {
  const { io } = argv.cli;
  const nodes = new Map<string, NodeObject>();
  let shown = '';
  const draw = () => {
    // the ages in a table move with the clock: compare what the rows say, not the text
    const key = JSON.stringify(fleetRows([...nodes.values()], now()));
    if (key === shown) return;
    shown = key;
    const text = snapshot(nodes.values(), argv.output, now());
    if (argv.output === 'table' || argv.output === 'wide')
      io.stdout.write(io.stdout.isTTY ? CLEAR + text : `${text}\n`);
    else io.stdout.write(argv.output === 'yaml' ? `---\n${text}` : text);
  };
  let synced = false;
  await runWatch<KubeNode>({
    k,
    path: NODES,
    signal: io.signal,
    log,
    onEvent: (type, node) => {
      const name = node.metadata.name ?? '';
      if (type === 'DELETED') nodes.delete(name);
      else nodes.set(name, node);
      if (synced) draw();
    },
    onSynced: () => {
      synced = true;
      draw();
    },
  });
}

export async function runStatus(argv: StatusArgs, now: () => Date = () => new Date()): Promise<number> {
  const config = await loadCliConfig(argv);
  const { io } = argv.cli;
  const log = cliLogger(config, io, quietUnlessAsked(config, 'error'));
  const k = clientsFor(config, io);
  if (argv.watch) {
    await watchStatus(k, argv, log, now);
    return 0;
  }
  const { items } = await listAll<KubeNode>(k, { path: NODES, signal: io.signal });
  io.stdout.write(snapshot(items as NodeObject[], argv.output, now()));
  return 0;
}

/** Like kubectl: the kubeconfig (config, KUBECONFIG), in a Pod the ServiceAccount, else ~/.kube/config. */
function clientsFor(config: Config, io: CliIo): KubeClients {
  const target = kubeTarget(config, io.env);
  return createKubeClients({ ...targetOptions(target), homeDir: io.homeDir, http: kubeHttp(config, io) });
}

export const command: CommandModule<GlobalArgs, StatusArgs> = {
  command: 'status',
  describe: 'show every node drainer is working on: phase, slot or queue place, progress, last error',
  builder: (y: Argv<GlobalArgs>) =>
    y
      .option('output', {
        alias: 'o',
        choices: ['table', 'wide', 'json', 'yaml'] as const,
        default: 'table' as const,
        describe: 'output format (wide: the whole last error)',
      })
      .option('watch', {
        alias: 'w',
        type: 'boolean',
        default: false,
        describe: 'keep watching the Nodes and redraw when something changes (Ctrl-C ends)',
      }),
  handler: handle((argv) => runStatus(argv)),
};
