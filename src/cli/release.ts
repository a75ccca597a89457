// `drainer release --node X`: let drains of the node go on although drainer holds its gate (a
// Failed evacuation, say). Recorded in the node's record; held again when the node is restored.
import type { CommandModule } from 'yargs';
import { ConfigError, ExitCode } from '../errors.ts';
import { releaseGateNow } from '../core/gate/release.ts';
import { cliLogger, type GlobalArgs, handle, loadCliConfig, nodeNameOf } from './context.ts';
import { defaultRunOnceDeps, type RunOnceDeps } from './run-once.ts';

async function handler(argv: GlobalArgs, deps: RunOnceDeps = defaultRunOnceDeps): Promise<number> {
  const config = await loadCliConfig(argv);
  const { io } = argv.cli;
  const log = cliLogger(config, io);
  const node = nodeNameOf(config, io);
  const k = deps.kube(config, io.env);
  if (!k)
    throw new ConfigError([
      {
        path: 'kubeconfig',
        message: 'drainer release needs Kubernetes access (kubeconfig, KUBECONFIG or in-cluster)',
      },
    ]);
  for (const line of await releaseGateNow({ k, config, node, log })) io.stdout.write(`${line}\n`);
  return ExitCode.ok;
}

export const command: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'release',
  describe: "release the node's drain gate now (drains go on although VMs may remain); held again on restore",
  handler: handle((argv) => handler(argv)),
};
