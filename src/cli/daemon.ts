// `drainer daemon` (also `--daemon` / `-daemon`): the agent of one node. Needs NODE_NAME; picks
// kubeconfig or in-cluster credentials explicitly; serves /healthz /readyz /metrics; on
// SIGTERM/SIGINT it starts no new work and exits, leaving the record (and the cordon) in place.
import type { CommandModule } from 'yargs';
import { kubeTarget } from '../config/kube-target.ts';
import type { Config } from '../config/schema.ts';
import { ConfigError, ExitCode } from '../errors.ts';
import { startShutdownTrigger } from './shutdown.ts';
import { createNodeAgent, type NodeAgentOptions } from '../core/agent/node-agent.ts';
import type { BackendPlugin } from '../core/backends/plugin.ts';
import { connectKube } from '../kube/connect.ts';
import type { KubeClients } from '../kube/http.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import { startHealthServer } from '../observability/server.ts';
import { buildPlugins } from '../plugins/registry.ts';
import { type GlobalArgs, handle, loadCliConfig } from './context.ts';

export interface DaemonOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly signal: AbortSignal;
  /** For the in-cluster check (KUBERNETES_SERVICE_HOST); default the process environment. */
  readonly env?: NodeJS.ProcessEnv;
  /** Injected in tests; built from the config otherwise. */
  readonly kube?: KubeClients;
  readonly metrics?: Metrics;
  readonly plugins?: (deps: { kube: KubeClients; metrics: Metrics }) => BackendPlugin[];
  readonly tuning?: Pick<NodeAgentOptions, 'watch' | 'backoff'>;
  /** Told the health server's port once it listens. */
  readonly onListening?: (port: number) => void;
}

/** Runs until the signal aborts. Throws ConfigError for bad input (exit 2). */
export async function runDaemon(o: DaemonOptions): Promise<void> {
  const { config, log } = o;
  // everything of the agent ends with it: one that stops by itself (it lost its node Lease) leaves
  // no loop behind, so the process exits and the kubelet starts the container again
  const ended = new AbortController();
  const signal = AbortSignal.any([o.signal, ended.signal]);
  const nodeName = config.nodeName;
  if (!nodeName) {
    throw new ConfigError([
      {
        path: 'nodeName',
        message:
          'NODE_NAME is required in daemon mode (set it from the downward API: fieldRef spec.nodeName)',
      },
    ]);
  }
  const metrics = o.metrics ?? new Metrics();
  let kube = o.kube;
  if (!kube) {
    const target = kubeTarget(config, o.env);
    log.info({ credentials: target.source, kubeconfig: target.kubeconfigPath }, 'connecting to Kubernetes');
    kube = await connectKube(target, metrics.apiRequest);
  }
  const plugins = o.plugins ? o.plugins({ kube, metrics }) : buildPlugins(config, { log, metrics, kube });
  log.info(
    { node: nodeName, plugins: plugins.map((p) => p.name), mode: config.nodeMaintenance.mode },
    'agent starting',
  );

  const { agent } = createNodeAgent({
    nodeName,
    config,
    k: kube,
    plugins,
    log,
    signal,
    metrics,
    ...o.tuning,
  });
  const server = config.server.enabled
    ? await startHealthServer({
        port: config.server.port,
        host: config.server.bindAddress,
        metrics,
        ready: () => agent.ready(),
        signal,
      }).catch((err: unknown) => {
        throw listenError(err, config);
      })
    : undefined;
  if (server) o.onListening?.(server.port);
  await startShutdownTrigger({ config, nodeName, k: kube, plugins, log, signal });
  try {
    await agent.run();
  } finally {
    ended.abort();
    await server?.close();
  }
}

/** The OS's refusal to listen, as one line naming the key to change (a second agent on the host, say). */
export function listenError(err: unknown, config: Config): unknown {
  const code = (err as { code?: unknown } | undefined)?.code;
  const at = `${config.server.bindAddress}:${config.server.port}`;
  const why =
    code === 'EADDRINUSE'
      ? `${at} is in use (another drainer agent on this host, or another program)`
      : code === 'EACCES'
        ? `${at} may not be used by this user (a port below 1024 needs privileges)`
        : code === 'EADDRNOTAVAIL'
          ? `${config.server.bindAddress} is not an address of this host`
          : undefined;
  if (!why) return err;
  return new ConfigError(
    [
      {
        path: code === 'EADDRNOTAVAIL' ? 'server.bindAddress' : 'server.port',
        message: `the health and metrics server cannot listen: ${why}; set server.port (DRAINER_SERVER_PORT) to a free port, or server.enabled: false`,
      },
    ],
    { cause: err },
  );
}

export const command: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'daemon',
  describe: 'watch this node (NODE_NAME): evacuate on cordon or NodeMaintenance, restore on uncordon',
  handler: handle(async (argv) => {
    const config = await loadCliConfig(argv);
    const { io, deps } = argv.cli;
    const log = createLogger({
      level: config.logLevel,
      destination: { write: (line: string) => void io.stdout.write(line) },
    });
    // io.signal aborts on SIGTERM/SIGINT: no new work, the record stays, the node stays cordoned
    io.signal.addEventListener(
      'abort',
      () => log.info('stopping: no new work; the record stays on the node'),
      {
        once: true,
      },
    );
    await runDaemon({
      config,
      log,
      signal: io.signal,
      env: io.env,
      plugins: ({ kube, metrics }) => deps.buildPlugins(config, { log, metrics, kube }),
    });
    return ExitCode.ok;
  }),
};
