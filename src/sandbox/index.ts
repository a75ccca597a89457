// The sandbox assembly: a scenario becomes a running Kubernetes API (with simulated controllers and
// KubeVirt) plus Keystone+Nova, and a kubeconfig and drainer config that point at them.
import { writeFile } from 'node:fs/promises';
import { makeStateDir } from './make-dir.ts';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import type { Logger } from '../observability/logger.ts';
import { ScaledClock, type Clock } from './clock.ts';
import { startControllers, type ControllerName, type StartedControllers } from './controllers/index.ts';
import { startKubeApiServer, type KubeApiServer } from './kube/index.ts';
import { startOpenStack, type OpenStackSandbox } from './openstack/index.ts';
import type { Scenario } from './scenario.ts';
import { resolveScenario } from './scenario-load.ts';
import { populate } from './scenario-populate.ts';
import { drainerConfigFor, openstackOptions } from './scenario-config.ts';
import { claimStateDir, type StateDirClaim } from './state-dir.ts';

export type { Scenario, ScenarioInput } from './scenario.ts';
export { defaultScenarioPath, loadScenarioFile, parseScenario } from './scenario-load.ts';

export interface SandboxOptions {
  /** A scenario file path, an object (validated), or nothing for scenarios/default.yaml. */
  scenario?: string | Scenario | object;
  /** Clock scale (simulated seconds per real second); default: the scenario's. */
  scale?: number;
  kubePort?: number;
  /** Serve the Kubernetes API over TLS (self-signed; the CA is in kube.caCert and the kubeconfig). */
  kubeTls?: boolean;
  /** Require this bearer token on the Kubernetes API (also in the kubeconfig). */
  kubeToken?: string;
  openstackPort?: number;
  /** Where kubeconfig and config.yaml are written; nothing is written without it. */
  stateDir?: string;
  /** Controllers to switch off (all run by default). */
  controllers?: Partial<Record<ControllerName, boolean>>;
  log?: Logger;
}

export interface Sandbox {
  kube: KubeApiServer;
  openstack: OpenStackSandbox;
  clock: Clock;
  scenario: Scenario;
  controllers: StartedControllers;
  kubeconfigPath?: string;
  configPath?: string;
  /** A drainer config (input form, as written to config.yaml) for the sandbox. */
  drainerConfig: Record<string, unknown>;
  close(): Promise<void>;
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const scenario = await resolveScenario(opts.scenario);
  // before any port is taken: a running sandbox's directory is refused, not rewritten
  const claim = opts.stateDir ? await claimStateDir(resolve(opts.stateDir)) : undefined;
  try {
    return await started(opts, scenario, claim);
  } catch (e) {
    claim?.release();
    throw e;
  }
}

async function started(
  opts: SandboxOptions,
  scenario: Scenario,
  claim: StateDirClaim | undefined,
): Promise<Sandbox> {
  const clock = new ScaledClock(opts.scale ?? scenario.clock.scale);
  const abort = new AbortController();
  const kube = await startKubeApiServer({
    port: opts.kubePort ?? scenario.kubernetes.port,
    clock,
    ...(opts.kubeTls ? { tls: true } : {}),
    ...(opts.kubeToken ? { token: opts.kubeToken } : {}),
  });
  let openstack: OpenStackSandbox;
  try {
    openstack = await startOpenStack(openstackOptions(scenario, clock, opts.openstackPort));
  } catch (e) {
    await kube.close();
    throw e;
  }
  const close = async () => {
    abort.abort();
    await Promise.allSettled([kube.close(), openstack.close()]);
    claim?.release();
  };
  try {
    populate(kube.store, scenario);
    const controllers = startControllers(
      {
        store: kube.store,
        clock,
        evictionHooks: kube.evictionHooks,
        createHooks: kube.createHooks,
        extensions: kube.extensions,
        timings: { ...scenario.timings, migrationSeconds: scenario.kubevirt.migrationSeconds },
        unpullableImages: scenario.unpullableImages,
        ...(opts.log ? { log: opts.log } : {}),
      },
      abort.signal,
      // Without KubeVirt its resources are not served: nothing to simulate.
      { ...opts.controllers, ...(scenario.kubevirt.installed ? {} : { kubevirt: false }) },
    );
    await settle();
    const sandbox: Sandbox = {
      kube,
      openstack,
      clock,
      scenario,
      controllers,
      drainerConfig: drainerConfigFor(scenario, openstack, opts.scale ?? scenario.clock.scale),
      close,
    };
    if (opts.stateDir) await writeState(sandbox, resolve(opts.stateDir));
    claim?.describe(kube.url);
    return sandbox;
  } catch (e) {
    await close();
    throw e;
  }
}

/** Lets the controllers' first reconcile (and the writes it causes) run. */
async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
}

async function writeState(sandbox: Sandbox, dir: string): Promise<void> {
  await makeStateDir(dir);
  const kubeconfigPath = join(dir, 'kubeconfig');
  const configPath = join(dir, 'config.yaml');
  await writeFile(kubeconfigPath, sandbox.kube.kubeconfig(), { mode: 0o600 });
  sandbox.drainerConfig = { kubeconfig: kubeconfigPath, ...sandbox.drainerConfig };
  const header =
    '# drainer config for the sandbox, written by `drainer sandbox`; rewritten on every start.\n';
  await writeFile(configPath, header + yaml.dump(sandbox.drainerConfig, { lineWidth: 120 }), { mode: 0o600 });
  sandbox.kubeconfigPath = kubeconfigPath;
  sandbox.configPath = configPath;
}
