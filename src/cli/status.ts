// `drainer status` (also `kubectl drainer status`): every node that has a drainer record, with its
// phase, trigger, age, fleet slot or queue position, per-plugin progress and last error. One list of
// Nodes; --watch keeps one Node watch open and redraws when what it shows changes.
import type { Argv, CommandModule } from 'yargs';
import { kubeTarget } from '../config/kube-target.ts';
import type { Config } from '../config/schema.ts';
import { UnknownNodeError } from '../errors.ts';
import { fleetRows, type AgentState } from '../core/fleet/fleet-view.ts';
import type { NodeObject } from '../core/cluster/objects.ts';
import { createKubeClients, type KubeClients } from '../kube/client.ts';
import { targetOptions } from '../kube/target-options.ts';
import type { KubeNode, KubeObject } from '../kube/types.ts';
import { GATE_SELECTOR, pdbsPath, podsPath } from '../kube/gate.ts';
import type { GateObjects } from '../core/gate/api.ts';
import { gateObjectsByNode } from '../core/gate/view.ts';
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
import { agentsOf, watchAgents } from './status-agents.ts';
import { renderStatus, type StatusOutput } from './status-render.ts';
import { gateView } from './status-header.ts';
import { verdictNow } from '../core/fleet/verdict-now.ts';
import { noAgentText, requireNamespace } from './fleet-namespace.ts';
import { clusterConfig } from './cluster-config.ts';
import type { FleetConfig } from '../config/schema.ts';
import { gateConfigured } from '../core/fleet/start-gate.ts';
import type { Verdict } from '../core/fleet/shared-verdict.ts';

interface StatusArgs extends GlobalArgs {
  output: StatusOutput;
  watch: boolean;
}

const NODES = '/api/v1/nodes';
/** Clears a terminal before a redraw (watch on a TTY); elsewhere snapshots follow one another. */
const CLEAR = '\x1b[H\x1b[2J';
/** --watch: how often the AGENT column is looked at again without an event (alive turns gone). */
const AGENT_RECHECK_MS = 5_000;

interface GateSource {
  readonly fleet: FleetConfig;
  readonly verdict?: Verdict;
  /** What an empty list says (default: what could be read). */
  readonly empty?: string;
  /** Where the settings came from: the last line (a table), or `config` (JSON, YAML). */
  readonly said?: string;
}

function snapshot(
  nodes: Iterable<NodeObject>,
  output: StatusOutput,
  now: Date,
  g: GateSource,
  agents?: ReadonlyMap<string, AgentState>,
  gates?: ReadonlyMap<string, GateObjects>,
): string {
  const all = [...nodes];
  const rows = fleetRows(all, now, agents, true, gates);
  // the header only where something can hold a start (configured here, or a node that waits)
  const shown = gateConfigured(g.fleet, g.fleet.blockers) || rows.some((r) => r.waiting) || g.verdict;
  // nodes in service whose agent runs: a fresh install shows its agents alive
  const listed = new Set(rows.map((r) => r.node));
  const idle = all.flatMap((n) => {
    const name = n.metadata?.name ?? '';
    const agent = agents?.get(name);
    return agent && !listed.has(name) ? [{ node: name, agent }] : [];
  });
  const header = shown ? gateView(g.fleet, rows, g.verdict, now) : undefined;
  return renderStatus(
    rows,
    output,
    now,
    header,
    idle,
    g.empty ?? emptyText(g.fleet.namespace, agents),
    g.said,
  );
}

/**
 * Nothing listed: in service only if agents were seen to say so. No agent Lease read: unknown; no
 * agent at all in the namespace: nothing observed the nodes (the one-shot makes that its error).
 */
function emptyText(namespace: string, agents: ReadonlyMap<string, AgentState> | undefined): string {
  if (!agents)
    return "no node has a drainer record (the agents' Leases could not be read: whether agents run is not known)";
  return noAgentText(namespace);
}

async function watchStatus(
  k: KubeClients,
  argv: StatusArgs,
  log: ReturnType<typeof cliLogger>,
  now: () => Date,
  source: Pick<GateSource, 'fleet' | 'said'>,
  gateEnabled: boolean,
): Promise<void> {
  const { fleet } = source;
  const { io } = argv.cli;
  const nodes = new Map<string, NodeObject>();
  let shown = '';
  let synced = false;
  // the DRAIN GATE column: the gate pods and PDBs, watched by label (a watch that fails leaves the
  // column saying what the records want)
  const gatePods = new Map<string, KubeObject>();
  const gatePdbs = new Map<string, KubeObject>();
  const gates = () =>
    gateWatch
      ? gateObjectsByNode([...nodes.keys()], [...gatePods.values()], [...gatePdbs.values()])
      : undefined;
  const draw = () => {
    if (!synced) return;
    const at = now();
    const agents = agentWatch.states(at);
    const g = gates();
    // the ages in a table move with the clock: compare what the rows say, not the text
    const key = JSON.stringify(fleetRows([...nodes.values()], at, agents, true, g));
    if (key === shown) return;
    shown = key;
    const text = snapshot(nodes.values(), argv.output, at, source, agents, g);
    if (argv.output === 'table' || argv.output === 'wide')
      io.stdout.write(io.stdout.isTTY ? CLEAR + text : `${text}\n`);
    else io.stdout.write(argv.output === 'yaml' ? `---\n${text}` : text);
  };
  const gateWatch = gateEnabled;
  const watchGate = (path: string, into: Map<string, KubeObject>) =>
    runWatch<KubeObject>({
      k,
      path,
      query: { labelSelector: GATE_SELECTOR },
      signal: io.signal,
      log,
      onEvent: (type, o) => {
        if (type === 'DELETED') into.delete(o.metadata.name ?? '');
        else into.set(o.metadata.name ?? '', o);
        draw();
      },
    });
  // the AGENT column: a Lease watch (renewals redraw only when what a row says changes)
  const agentWatch = watchAgents(k, fleet, log, io.signal, draw);
  await agentWatch.load();
  // an agent that dies renews nothing: a look every few seconds turns it "gone" (no API call)
  const tick = setInterval(draw, AGENT_RECHECK_MS);
  tick.unref();
  try {
    await Promise.all([
      agentWatch.run(),
      ...(gateWatch
        ? [watchGate(podsPath(fleet.namespace), gatePods), watchGate(pdbsPath(fleet.namespace), gatePdbs)]
        : []),
      runWatch<KubeNode>({
        k,
        path: NODES,
        signal: io.signal,
        log,
        onEvent: (type, node) => {
          const name = node.metadata.name ?? '';
          if (argv.node !== undefined && name !== argv.node) return; // --node: that node only
          if (type === 'DELETED') nodes.delete(name);
          else nodes.set(name, node);
          draw();
        },
        onSynced: () => {
          synced = true;
          draw();
        },
      }),
    ]);
  } finally {
    clearInterval(tick);
  }
}

export async function runStatus(argv: StatusArgs, now: () => Date = () => new Date()): Promise<number> {
  const local = await loadCliConfig(argv);
  const { io } = argv.cli;
  const k = clientsFor(local, io);
  await requireNamespace(k, local.fleet.namespace, io.signal);
  // the agents' windows, freezes and blockers, not only this machine's
  const { config, said } = await clusterConfig(argv, local, k, { cloud: false });
  const log = cliLogger(config, io, quietUnlessAsked(config, 'error'));
  if (argv.watch) {
    await watchStatus(k, argv, log, now, { fleet: config.fleet, said }, config.drainGate.enabled);
    return 0;
  }
  const [{ items: all }, agents, verdict, gateObjects] = await Promise.all([
    listAll<KubeNode>(k, { path: NODES, signal: io.signal }),
    agentsOf(k, config.fleet, now(), log),
    config.fleet.blockers.prometheus ? verdictNow(k, config.fleet, io.signal) : undefined,
    listGates(k, config, io.signal, log),
  ]);
  // --node: that node only, and the same line as every command for a node the cluster lacks
  const items = argv.node === undefined ? all : all.filter((n) => n.metadata.name === argv.node);
  if (argv.node !== undefined && items.length === 0) throw new UnknownNodeError(argv.node);
  const gates = gateObjects
    ? gateObjectsByNode(
        items.map((n) => n.metadata.name ?? ''),
        gateObjects.pods,
        gateObjects.pdbs,
      )
    : undefined;
  const rows = fleetRows(items, now(), agents, true, gates);
  // no record and no agent where we looked: nothing observed the nodes, so no "in service" (exit 3)
  const unobserved =
    agents !== undefined &&
    rows.length === 0 &&
    ![...agents.keys()].some((n) => items.some((i) => i.metadata.name === n));
  const g: GateSource = {
    fleet: config.fleet,
    ...(verdict ? { verdict } : {}),
    ...(unobserved ? { empty: '' } : {}),
    said,
  };
  io.stdout.write(snapshot(items as NodeObject[], argv.output, now(), g, agents, gates));
  if (!unobserved) return 0;
  const text =
    argv.node === undefined
      ? noAgentText(config.fleet.namespace)
      : `node ${argv.node} has no drainer record and no agent Lease (drainer-node-${argv.node}) in namespace ${config.fleet.namespace}: nothing says it is in service`;
  io.stderr.write(`error: ${text}\n`);
  return NOTHING_OBSERVED;
}

/** Exit code of a status that found no agent and no record: nothing says the nodes are in service. */
export const NOTHING_OBSERVED = 3;

/**
 * The gate pods and PDBs (two lists by label), so the DRAIN GATE column says what the API server
 * shows. Unreadable (no rights): the column says what the records want, and a debug line says why.
 */
async function listGates(
  k: KubeClients,
  config: Config,
  signal: AbortSignal,
  log: ReturnType<typeof cliLogger>,
): Promise<{ pods: KubeObject[]; pdbs: KubeObject[] } | undefined> {
  if (!config.drainGate.enabled) return undefined;
  const query = { labelSelector: GATE_SELECTOR };
  const ns = config.fleet.namespace;
  try {
    const [pods, pdbs] = await Promise.all([
      listAll<KubeObject>(k, { path: podsPath(ns), query, signal }),
      listAll<KubeObject>(k, { path: pdbsPath(ns), query, signal }),
    ]);
    return { pods: pods.items, pdbs: pdbs.items };
  } catch (err) {
    log.debug({ err }, 'cannot list the drain gate objects: DRAIN GATE says what the records want');
    return undefined;
  }
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
