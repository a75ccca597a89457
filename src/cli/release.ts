// `drainer release --node X`: let drains of the node go on although drainer holds its gate (a
// Failed evacuation, say). It asks the plugins what is still on the host first: with VMs left (or
// nothing known) it refuses without --force (exit 3). Recorded on the Node; held again on restore.
import type { Argv, CommandModule } from 'yargs';
import { ConfigError, ExitCode } from '../errors.ts';
import { releaseGateNow, type Remaining } from '../core/gate/release.ts';
import { remainingOn } from '../core/gate/remaining.ts';
import { PluginHost } from '../core/backends/host.ts';
import { releaseMachineHook } from '../core/capi/release-hook.ts';
import type { KubeClients } from '../kube/client.ts';
import type { Logger } from '../observability/logger.ts';
import {
  cliLogger,
  commandPlugins,
  type GlobalArgs,
  handle,
  kubeHttp,
  loadCliConfig,
  nodeNameOf,
  quietUnlessAsked,
} from './context.ts';
import type { Config } from '../config/schema.ts';
import { defaultRunOnceDeps, type RunOnceDeps } from './run-once.ts';

interface ReleaseArgs extends GlobalArgs {
  force?: boolean;
}

/** drainer release's own exit code when it refuses (as plan's "refused"). */
export const RELEASE_REFUSED = 3;

const firstLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';

/** What the plugins list on the host now; a plugin that cannot be built or asked makes it unknown. */
async function remainingWith(
  argv: ReleaseArgs,
  config: Config,
  log: Logger,
  k: KubeClients,
  node: string,
  signal: AbortSignal,
): Promise<Remaining> {
  let host: PluginHost;
  try {
    host = new PluginHost({ plugins: commandPlugins(argv, config, log, k), log });
  } catch (err) {
    return { names: [], unknown: firstLine(err) };
  }
  // every VM on the host, stopped ones too: the one count status, plan and the metric give
  return remainingOn(host, node, signal);
}

async function handler(argv: ReleaseArgs, deps: RunOnceDeps = defaultRunOnceDeps): Promise<number> {
  const config = await loadCliConfig(argv);
  const { io } = argv.cli;
  // the lines below are the output: no JSON log on a terminal unless asked for
  const log = cliLogger(config, io, quietUnlessAsked(config, 'error'));
  const node = nodeNameOf(config, io);
  const k = deps.kube(config, io.env, kubeHttp(config, io));
  if (!k)
    throw new ConfigError([
      {
        path: 'kubeconfig',
        message: 'drainer release needs Kubernetes access (kubeconfig, KUBECONFIG or in-cluster)',
      },
    ]);
  const r = await releaseGateNow({
    k,
    config,
    node,
    log,
    force: argv.force === true,
    remaining: () => remainingWith(argv, config, log, k, node, io.signal),
  });
  const out = r.released ? io.stdout : io.stderr;
  // a deleted Cluster API Machine waits on drainer's hook for what the gate holds: it follows the gate
  const hook = await releaseMachineHook({ k, node, released: r.released }).catch((err: unknown) => [
    `could not look at the node's Cluster API Machine: ${firstLine(err)}`,
  ]);
  for (const line of [...r.lines, ...hook]) out.write(`${line}\n`);
  return r.released ? ExitCode.ok : RELEASE_REFUSED;
}

export const command: CommandModule<GlobalArgs, ReleaseArgs> = {
  command: 'release',
  describe:
    "release the node's drain gate now (drains go on); refused while VMs remain unless --force (exit 3); held again on restore",
  builder: (y: Argv<GlobalArgs>) =>
    y.option('force', {
      type: 'boolean',
      describe: 'release although VMs are still on the host (or what remains cannot be found out)',
    }),
  handler: handle((argv) => handler(argv)),
};
