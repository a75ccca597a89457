// The daemon's shutdown trigger (issue 49), composed: logind's watch on the host's system bus
// (src/logind), the trigger (core/shutdown) on the Node and the plugins. Off, or no logind on the
// host: the agent runs as before and says so once at start.
import type { Config } from '../config/schema.ts';
import { PluginHost } from '../core/backends/host.ts';
import type { BackendPlugin } from '../core/backends/plugin.ts';
import { remainingOn } from '../core/gate/remaining.ts';
import { fallBack } from '../core/shutdown/fallback.ts';
import { LOGIND_DELAY_ANNOTATION, SHUTDOWN_ANNOTATION } from '../core/shutdown/mark.ts';
import { ShutdownTrigger } from '../core/shutdown/trigger.ts';
import type { KubeClients } from '../kube/client.ts';
import { getNode, setAnnotation } from '../kube/node.ts';
import { openBus } from '../logind/bus.ts';
import { systemdInhibit } from '../logind/inhibitor.ts';
import { ShutdownWatch } from '../logind/watch.ts';
import type { Logger } from '../observability/logger.ts';

export interface ShutdownSetup {
  readonly config: Config;
  readonly nodeName: string;
  readonly k: KubeClients;
  readonly plugins: readonly BackendPlugin[];
  readonly log: Logger;
  readonly signal: AbortSignal;
}

/** logind's cap on the Node, for drainer doctor (which cannot reach the hosts' buses); null: none here. */
function publishCap(o: ShutdownSetup, seconds: string | null): void {
  void Promise.resolve()
    .then(() => setAnnotation(o.k, o.nodeName, LOGIND_DELAY_ANNOTATION, seconds))
    .catch((err: unknown) => o.log.debug({ err }, "logind's cap not published on the Node"));
}

/** Starts the watch and the trigger; resolves once they run (or it said why not). */
export async function startShutdownTrigger(o: ShutdownSetup): Promise<void> {
  const { config, log, signal } = o;
  if (!config.shutdown.enabled || config.dryRun) {
    const why = config.dryRun ? 'a dry run' : 'shutdown.enabled is false';
    log.info(`${why}: the host shutting down by itself is not watched`);
    return;
  }
  const host = new PluginHost({ plugins: o.plugins, log });
  const running = async (s: AbortSignal) => {
    const r = await remainingOn(host, o.nodeName, s);
    if (r.unknown !== undefined) throw new Error(r.unknown);
    return r.names.length - (r.stopped ?? 0);
  };
  let trigger: ShutdownTrigger | undefined;
  let capMs: number | undefined;
  try {
    const bus = await openBus(config.shutdown.busSocket, signal);
    const watch = await ShutdownWatch.start({
      bus,
      takeLock: systemdInhibit({
        socketPath: config.shutdown.busSocket,
        command: config.shutdown.inhibitCommand,
      }),
      marginMs: config.shutdown.releaseMargin * 1000,
      onShutdown: (t) =>
        void trigger?.onShutdown(t).catch((err: unknown) => log.warn({ err }, 'shutdown trigger failed')),
    });
    trigger = new ShutdownTrigger({
      lock: watch,
      hosting: running,
      unreachable: async (s) => {
        try {
          await getNode(o.k, o.nodeName, s);
        } catch (e) {
          return `the API server: ${e instanceof Error ? e.message : 'no answer'}`;
        }
        return running(s).then(
          () => undefined,
          (e: unknown) => (e instanceof Error ? e.message : 'no answer'),
        );
      },
      fallback: (s, marginMs) => fallBack(o.plugins, { name: o.nodeName }, { log, signal: s, marginMs }),
      mark: async (value) => void (await setAnnotation(o.k, o.nodeName, SHUTDOWN_ANNOTATION, value)),
      marked: async () =>
        (await getNode(o.k, o.nodeName, signal)).metadata?.annotations?.[SHUTDOWN_ANNOTATION] !== undefined,
      ready: async (s) => {
        const node = await getNode(o.k, o.nodeName, s);
        const conditions = ((node.status as { conditions?: unknown } | undefined)?.conditions ?? []) as {
          type?: string;
          status?: string;
        }[];
        const ready = conditions.some((c) => c.type === 'Ready' && c.status === 'True');
        // the cloud answers for the host (nova-compute's service is looked at by the restore itself)
        return (
          ready &&
          (await running(s).then(
            () => true,
            () => false,
          ))
        );
      },
      log,
    });
    capMs = watch.delayMaxMs;
    log.info(
      { busSocket: config.shutdown.busSocket, inhibitDelayMaxSec: watch.delayMaxMs / 1000 },
      'watching logind: a shutdown of this host evacuates it first',
    );
  } catch (err) {
    log.info(
      { err },
      `no logind on ${config.shutdown.busSocket}: the host shutting down by itself is not watched`,
    );
    publishCap(o, null);
    return;
  }
  publishCap(o, String(Math.floor((capMs ?? 0) / 1000)));
  const t = trigger;
  void t
    .afterBoot(signal)
    .catch((err: unknown) => log.warn({ err }, 'after boot: could not give the node back'));
  // hold the lock only while VMs run here; looked at again every resync (at most a minute)
  const every = Math.min(config.resyncInterval, 60) * 1000;
  const look = () =>
    void t
      .refresh(signal)
      .catch((err: unknown) => log.warn({ err }, 'could not tell whether the node hosts VMs'));
  look();
  const timer = setInterval(look, every);
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}
