// `drainer restore`: undo what the plugins changed for the node (nova: re-enable the compute
// service only if its disabled reason is still ours). Same Kubernetes seam as run-once.
import type { CommandModule } from 'yargs';
import { ExitCode, isBadInput } from '../errors.ts';
import { PluginHost, type RecordStore, type RestoreResult } from '../core/backends/host.ts';
import type { BackendPlugin } from '../core/backends/plugin.ts';
import { restoreOnce } from '../core/agent/once.ts';
import { leaseWaitLines } from './lease-wait.ts';
import type { Logger } from '../observability/logger.ts';
import {
  type CliIo,
  cliLogger,
  commandPlugins,
  kubeHttp,
  type GlobalArgs,
  handle,
  loadCliConfig,
  nodeNameOf,
  quietUnlessAsked,
} from './context.ts';
import { FileRecordStore } from './record-file.ts';
import { defaultRunOnceDeps, type RecordArgs, type RunOnceDeps, withStateFile } from './run-once.ts';

export function printRestore(results: readonly RestoreResult[], io: CliIo): number {
  for (const r of results)
    io.stdout.write(
      r.ok ? `${r.plugin}: restored\n` : `${r.plugin}: failed: ${r.message ?? 'unknown error'}\n`,
    );
  if (results.some((r) => !r.ok && isBadInput(r.error))) return ExitCode.badInput;
  return results.every((r) => r.ok) ? ExitCode.ok : ExitCode.incomplete;
}

export async function restore(input: {
  io: CliIo;
  log: Logger;
  node: string;
  dryRun: boolean;
  plugins: readonly BackendPlugin[];
  records: RecordStore;
}): Promise<number> {
  const host = new PluginHost({ plugins: input.plugins, log: input.log });
  const results = await host.restore(
    { name: input.node },
    { signal: input.io.signal, dryRun: input.dryRun, records: input.records },
  );
  return printRestore(results, input.io);
}

async function handler(argv: RecordArgs, deps: RunOnceDeps = defaultRunOnceDeps): Promise<number> {
  const config = await loadCliConfig(argv);
  const { io } = argv.cli;
  // the lines below are the output: logs (JSON on stderr) only for the unexpected, unless asked for
  const log = cliLogger(config, io, quietUnlessAsked(config, 'error'));
  const node = nodeNameOf(config, io);
  const kube = deps.kube(config, io.env, kubeHttp(config, io));
  const plugins = commandPlugins(argv, config, log, kube);
  // Kubernetes configured: undo what the Node's record says (E2's path)
  if (kube) {
    const force = argv.force === true;
    const onWait = leaseWaitLines(io);
    const results = await restoreOnce({
      k: kube,
      config,
      node,
      plugins,
      log,
      signal: io.signal,
      force,
      onWait,
    });
    return printRestore(results, io);
  }
  const records = await deps.records(config, node, argv);
  const code = await restore({ io, log, node, dryRun: config.dryRun, plugins, records });
  // Everything is back: the state of that run-once is spent.
  if (code === ExitCode.ok && !config.dryRun && records instanceof FileRecordStore) await records.remove();
  return code;
}

export const command: CommandModule<GlobalArgs, RecordArgs> = {
  command: 'restore',
  describe: 'put the node back in service: undo only what drainer changed (e.g. re-enable nova-compute)',
  builder: (y) =>
    withStateFile(y).option('force', {
      type: 'boolean',
      describe:
        "with Kubernetes access: act even though another drainer agent holds the node's Lease drainer-node-<node> (without it restore exits 2 naming the holder), and even when the node's record cannot be read (then undo what is recognisably drainer's: our nova-compute disable, our taint; the record is kept aside)",
    }),
  handler: handle((argv) => handler(argv)),
};
