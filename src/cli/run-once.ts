// `drainer run-once`: evacuate one node through the enabled plugins, then exit.
// 0 = every workload that had to move moved; 1 = some stayed (each printed with why); 2 = bad input.
//
// Records: without Kubernetes the plugin records go to a state file (--state-file, default
// ./.drainer-state/<node>.json) so that `drainer restore` later undoes exactly what was changed.
//
// Kubernetes seam (for the daemon/reconciler owner): `RunOnceDeps.records` and `RunOnceDeps.kube`.
// A `--cordon` flag would go in `stateFileOption`'s neighbour below; when kube access is configured,
// build the clients (src/kube/client.ts), return them from `kube` (the KubeVirt plugin is then built
// too) and return a NodeRecordStore (src/core/record/record.ts) from `records`, so a later daemon resumes our record.
import type { Argv, CommandModule } from 'yargs';
import type { Config } from '../config/schema.ts';
import { judgeCapacity } from '../core/preflight/capacity.ts';
import { ExitCode, isBadInput } from '../errors.ts';
import { type HostOutcome, PluginHost, type RecordStore } from '../core/backends/host.ts';
import type { BackendPlugin, NodeRef } from '../core/backends/plugin.ts';
import { declaredNode, withNodeFlags, type NodeFlagArgs } from './node-flags.ts';
import type { KubeClients } from '../kube/client.ts';
import type { KubeHttpOptions } from '../kube/http.ts';
import type { Logger } from '../observability/logger.ts';
import {
  type CliIo,
  cliLogger,
  commandPlugins,
  kubeHttp,
  quietUnlessAsked,
  type GlobalArgs,
  handle,
  loadCliConfig,
  nodeNameOf,
} from './context.ts';
import { kubeIfConfigured, runOnceOnKubernetes } from './kube-once.ts';
import { dryRunOnce } from './run-once-dry.ts';
import { leaseWaitLines } from './lease-wait.ts';
import { clusterConfig } from './cluster-config.ts';
import { defaultStateFile, FileRecordStore } from './record-file.ts';
import { LogProgress, type ProgressSink, TerminalProgress } from './output-progress.ts';

export interface RunOnceInput {
  config: Config;
  io: CliIo;
  log: Logger;
  node: string;
  plugins: readonly BackendPlugin[];
  records: RecordStore;
  /** Terminal progress lines instead of JSON logs. */
  tty: boolean;
  /** The node as the plugins see it (its mode and reboot declared by flags); default just its name. */
  ref?: NodeRef;
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Prints each plugin's result and what stayed, returns the exit code. */
export function summarize(outcomes: readonly HostOutcome[], io: CliIo): number {
  let bad = false;
  for (const o of outcomes) {
    const moved = o.workloads.filter((w) => w.state === 'succeeded').length;
    const stayed = o.workloads.filter((w) => w.state !== 'succeeded');
    const status = o.succeeded ? 'done' : 'incomplete';
    io.stdout.write(
      `${o.plugin}: ${status}, ${moved} moved, ${stayed.length} stayed${o.message ? ` (${o.message})` : ''}\n`,
    );
    for (const w of stayed) {
      const why = w.message ?? (w.state === 'pending' ? 'not started' : w.state);
      io.stdout.write(`  stayed: ${w.name} (${w.id}) ${w.state}: ${why}\n`);
    }
    if (o.error !== undefined && isBadInput(o.error)) bad = true;
  }
  if (bad) return ExitCode.badInput;
  return outcomes.every((o) => o.succeeded) ? ExitCode.ok : ExitCode.incomplete;
}

/** The command's work, with every dependency passed in (tests call this with fake plugins). */
export async function runOnce(input: RunOnceInput): Promise<number> {
  const { config, io, log, node } = input;
  if (input.plugins.length === 0) {
    io.stderr.write('warning: no plugin is enabled: nothing to evacuate\n');
    return ExitCode.ok;
  }
  const host = new PluginHost({ plugins: input.plugins, log });
  const refused = await capacityRefusal(host, input);
  if (refused !== undefined) {
    io.stdout.write(`${refused.label}: ${refused.text}\nnothing was changed\n`);
    return refused.code;
  }
  const sink: ProgressSink = input.tty ? new TerminalProgress(io.stdout) : new LogProgress(log);
  const deadline = new Date(Date.now() + config.evacuation.timeout * 1000);
  log.info({ node, deadline: deadline.toISOString(), dryRun: config.dryRun }, 'run-once: evacuating');
  let outcomes: HostOutcome[];
  try {
    outcomes = await host.evacuate(input.ref ?? { name: node }, {
      signal: io.signal,
      deadline,
      trigger: 'run-once',
      dryRun: config.dryRun,
      abortOnCancel: config.evacuation.abortOnCancel,
      records: input.records,
      onProgress: (plugin, items) => sink.update(plugin, items),
    });
  } finally {
    sink.finish();
  }
  return summarize(outcomes, io);
}

interface Refusal {
  readonly label: 'refused' | 'InsufficientCapacity' | 'EvacuationBlocked';
  readonly text: string;
  readonly code: number;
}

/**
 * The capacity pre-flight of run-once without Kubernetes (the reconciler has its own): the
 * refusal under enforce, else undefined. A fresh run whose plan failed (credentials refused: exit
 * 2; no answer: exit 1) stops here, said once on stderr; a run resuming from its state file has
 * changed things already, so warns and goes on.
 */
async function capacityRefusal(host: PluginHost, input: RunOnceInput): Promise<Refusal | undefined> {
  const { config, io, node } = input;
  const mode = config.evacuation.capacityCheck;
  if (mode === 'off' || config.dryRun) return undefined;
  const fresh = input.plugins.every((p) => input.records.get(p.name) === undefined);
  const results = await host.planAll(input.ref ?? { name: node }, io.signal, { capacity: true });
  const failed = results.find((r) => isBadInput(r.error)) ?? results.find((r) => r.error !== undefined);
  if (failed && fresh) {
    io.stderr.write(`error: ${failed.plugin}: ${errorText(failed.error)}\n`);
    const code = isBadInput(failed.error) ? ExitCode.badInput : ExitCode.incomplete;
    return { label: 'refused', text: `the ${failed.plugin} plan failed`, code };
  }
  if (results.some((r) => isBadInput(r.error))) return undefined;
  // a plan-wide blocker (missing rights) is refused like the capacity, before the first change
  const blockers = results.flatMap((r) => r.plan?.blockers ?? []);
  if (blockers.length && fresh) {
    const text = blockers.map((b) => b.message).join('; ');
    return { label: 'EvacuationBlocked', text, code: ExitCode.badInput };
  }
  const plans = failed ? undefined : results.flatMap((r) => (r.plan ? [r.plan] : []));
  const why = failed ? `${failed.plugin}: ${errorText(failed.error)}` : undefined;
  const d = judgeCapacity(fresh ? mode : 'warn', plans, why);
  if (d.unchecked) io.stderr.write(`warning: capacity not checked: ${d.unchecked}\n`);
  if (d.warn) io.stderr.write(`warning: InsufficientCapacity: ${d.warn}\n`);
  return d.refuse ? { label: 'InsufficientCapacity', text: d.refuse, code: ExitCode.incomplete } : undefined;
}

export interface RecordArgs extends GlobalArgs, NodeFlagArgs {
  stateFile?: string;
  /** run-once on Kubernetes: cordon the node first. */
  cordon?: boolean;
  /** run-once on Kubernetes: skip the fleet slot (logged). */
  budget?: boolean;
  /** run-once: act although another agent holds the node's Lease; restore: act on an unreadable record. */
  force?: boolean;
}

export interface RunOnceDeps {
  /** The record store: the state file unless the Kubernetes path supplies the Node's. */
  records: (config: Config, node: string, argv: RecordArgs) => Promise<RecordStore>;
  /** Kubernetes clients when kube access is configured (none by default). */
  kube: (config: Config, env: NodeJS.ProcessEnv, http?: KubeHttpOptions) => KubeClients | undefined;
}

export const defaultRunOnceDeps: RunOnceDeps = {
  records: (_config, node, argv) =>
    FileRecordStore.open(argv.stateFile ?? defaultStateFile(argv.cli.io.cwd, node)),
  kube: kubeIfConfigured,
};

/** Adds --state-file (run-once and restore share it). */
export const withStateFile = (y: Argv<GlobalArgs>): Argv<RecordArgs> =>
  y.option('state-file', {
    type: 'string',
    describe: 'where run-once keeps what it changed, for restore (default ./.drainer-state/<node>.json)',
  });

async function handler(argv: RecordArgs, deps: RunOnceDeps = defaultRunOnceDeps): Promise<number> {
  const local = await loadCliConfig(argv);
  const { io } = argv.cli;
  const tty = io.stdout.isTTY === true;
  const kube = deps.kube(local, io.env, kubeHttp(local, io));
  // a dry run with a cluster says what the node's agent would do: with the agents' ConfigMap
  const view = kube && local.dryRun ? await clusterConfig(argv, local, kube, { cloud: true }) : undefined;
  const config = view?.config ?? local;
  // On a terminal the progress lines are the output; logs (stderr) would tear them, so only warnings.
  const log = cliLogger(config, io, tty ? quietUnlessAsked(config, 'warn') : config.logLevel);
  const node = nodeNameOf(config, io);
  const declared = declaredNode(node, argv, kube !== undefined);
  if ('refused' in declared) {
    io.stderr.write(`error: ${declared.refused}\n`);
    return ExitCode.badInput;
  }
  const plugins = commandPlugins(argv, config, log, kube);
  const shared = { config, io, log, node, plugins, cordon: argv.cordon === true };
  // a dry run says what would happen (the pre-flight), never a phase the reconcile did not reach
  if (config.dryRun)
    return dryRunOnce({ ...shared, k: kube, declared: declared.ref, ...(view ? { said: view.said } : {}) });
  // Kubernetes configured: the agent's reconcile, once, with the record on the Node (E2's path)
  if (kube)
    return runOnceOnKubernetes({
      ...shared,
      k: kube,
      noBudget: argv.budget === false,
      force: argv.force === true,
      onWait: leaseWaitLines(io),
    });
  const records = await deps.records(config, node, argv);
  return runOnce({ config, io, log, node, plugins, records, tty, ref: declared.ref });
}

export const command: CommandModule<GlobalArgs, RecordArgs> = {
  command: 'run-once',
  describe:
    'evacuate the node (--node, $NODE_NAME or this host) once and exit: 0 all moved, 1 some stayed, 2 bad input',
  builder: (y) =>
    withNodeFlags(withStateFile(y))
      .option('cordon', {
        type: 'boolean',
        describe: 'with Kubernetes access: cordon the node first (as kubectl cordon would)',
      })
      .option('budget', {
        type: 'boolean',
        describe:
          'with Kubernetes access: wait for a fleet evacuation slot (fleet.maxConcurrentEvacuations) first; --no-budget skips it',
      })
      .option('force', {
        type: 'boolean',
        describe:
          "with Kubernetes access: act even though another drainer agent holds the node's Lease drainer-node-<node> (without it run-once exits 2 naming the holder)",
      }),
  handler: handle((argv) => handler(argv)),
};
