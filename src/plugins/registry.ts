// Builds the enabled backends from the config: the composition root's one place that knows the
// concrete plugins. Factories can be swapped (tests, the sandbox) through `deps.factories`.
import type { Config, KubevirtConfig, NovaConfig, OpenStackConfig } from '../config/schema.ts';
import { ConfigError, type ConfigIssue } from '../errors.ts';
import type { BackendPlugin } from '../core/backends/plugin.ts';
import type { KubeClients } from '../kube/client.ts';
import type { Logger } from '../observability/logger.ts';
import type { ApiRequestHook, Metrics } from '../observability/metrics.ts';
import { createKubevirtPlugin } from './kubevirt/index.ts';
import { createNovaPlugin } from './nova/index.ts';

export interface PluginFactories {
  nova: (deps: {
    nova: NovaConfig;
    openstack: OpenStackConfig;
    log: Logger;
    onApiRequest?: ApiRequestHook;
    onSlow?: (text: string) => void;
  }) => BackendPlugin;
  kubevirt: (deps: { kubevirt: KubevirtConfig; kube: KubeClients; log: Logger }) => BackendPlugin;
}

export const defaultFactories: PluginFactories = {
  nova: createNovaPlugin,
  kubevirt: createKubevirtPlugin,
};

export interface RegistryDeps {
  log: Logger;
  metrics?: Metrics;
  /** Without Kubernetes access (run-once on a bare host) the KubeVirt plugin is not built. */
  kube?: KubeClients;
  factories?: Partial<PluginFactories>;
  /** A cloud request with no answer for 5 s: what it waits for (the CLI prints it on stderr). */
  onSlow?: (text: string) => void;
}

/** What is missing from the resolved OpenStack credentials (empty when they are usable). */
export function missingCredentials(os: OpenStackConfig): string[] {
  const a = os.auth;
  const missing: string[] = [];
  if (!a.authUrl) missing.push('openstack.auth.authUrl (OS_AUTH_URL)');
  if (a.applicationCredentialId || a.applicationCredentialName || a.applicationCredentialSecret) {
    if (!a.applicationCredentialSecret) missing.push('openstack.auth.applicationCredentialSecret');
    if (!a.applicationCredentialId && !a.applicationCredentialName) {
      missing.push('openstack.auth.applicationCredentialId or applicationCredentialName');
    }
    if (!a.applicationCredentialId && !a.username && !a.userId) {
      missing.push(
        'openstack.auth.username or userId (an application credential given by name needs its user)',
      );
    }
    return missing;
  }
  if (!a.username && !a.userId) missing.push('openstack.auth.username or userId (OS_USERNAME)');
  if (!a.password) missing.push('openstack.auth.password (OS_PASSWORD)');
  return missing;
}

const hasAnyCredential = (os: OpenStackConfig): boolean =>
  Object.values(os.auth).some((v) => v !== undefined && v !== '');

export function buildPlugins(config: Config, deps: RegistryDeps): BackendPlugin[] {
  const f = { ...defaultFactories, ...deps.factories };
  const plugins: BackendPlugin[] = [];
  if (config.nova.enabled) {
    const missing = missingCredentials(config.openstack);
    if (missing.length > 0) {
      const hint = 'set nova.enabled: false (DRAINER_NOVA_ENABLED=false) to run without Nova';
      const issues: ConfigIssue[] = hasAnyCredential(config.openstack)
        ? missing.map((m) => ({
            path: 'openstack.auth',
            message: `incomplete OpenStack credentials: ${m} is missing; ${hint}`,
          }))
        : [
            {
              path: 'openstack.auth',
              message: `no OpenStack credentials found (clouds.yaml with OS_CLOUD, OS_* variables, the config file's openstack: block or its legacy keys); ${hint}`,
            },
          ];
      throw new ConfigError(issues);
    }
    plugins.push(
      f.nova({
        nova: config.nova,
        openstack: config.openstack,
        log: deps.log,
        ...(deps.metrics ? { onApiRequest: deps.metrics.apiRequest } : {}),
        ...(deps.onSlow ? { onSlow: deps.onSlow } : {}),
      }),
    );
  }
  // KubeVirt needs the cluster: it is built only where the caller has Kubernetes access.
  if (config.kubevirt.enabled && deps.kube) {
    plugins.push(f.kubevirt({ kubevirt: config.kubevirt, kube: deps.kube, log: deps.log }));
  }
  return plugins;
}
