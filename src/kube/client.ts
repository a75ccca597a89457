// The Kubernetes clients from a kubeconfig (or client-node's in-cluster loader): the raw JSON requester
// of http.ts over client-node's KubeConfig. Every request is counted through onApiRequest. The daemon
// in a Pod uses in-cluster.ts instead and never loads this file (see connect.ts).
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigError } from '../errors.ts';
import { KubeHttp, type ApiRequestHook, type KubeClients, type KubeHttpOptions } from './http.ts';
import { KubeconfigWire } from './wire-kubeconfig.ts';

export type { ApiRequestHook, KubeClients } from './http.ts';

export interface KubeClientOptions {
  /** A kubeconfig path, or a KUBECONFIG-style list (first file wins, later ones merged). */
  readonly kubeconfigPath?: string;
  readonly kubeconfigYaml?: string;
  /** Use the ServiceAccount (the caller decides, e.g. when KUBERNETES_SERVICE_HOST is set). */
  readonly inCluster?: boolean;
  /** The kubeconfig's context to use instead of its current-context (kubectl --context). */
  readonly context?: string;
  readonly homeDir?: string;
  readonly onApiRequest?: ApiRequestHook;
  /** Default request timeout and the "waiting for …" notice (the CLI's). */
  readonly http?: KubeHttpOptions;
}

function loadKubeConfig(opts: KubeClientOptions): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (opts.kubeconfigYaml !== undefined) kc.loadFromString(opts.kubeconfigYaml);
    else if (opts.inCluster) kc.loadFromCluster();
    else {
      const files = (opts.kubeconfigPath ?? '').split(delimiter).filter(Boolean);
      if (files.length === 0) files.push(join(opts.homeDir ?? homedir(), '.kube', 'config'));
      const [first, ...rest] = files as [string, ...string[]];
      if (!existsSync(first)) throw new Error(`kubeconfig ${first} does not exist`);
      loadFile(kc, first);
      for (const f of rest) {
        const more = new KubeConfig();
        loadFile(more, f);
        kc.mergeConfig(more);
      }
    }
  } catch (err) {
    // one line: js-yaml's message carries a code frame of the file after its first line
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
    throw new ConfigError([{ path: 'kubeconfig', message: why }], { cause: err });
  }
  if (opts.context !== undefined) {
    if (!kc.getContextObject(opts.context))
      throw new ConfigError([
        {
          path: 'kubeContext',
          message: `the kubeconfig has no context ${opts.context} (it has: ${kc.contexts.map((c) => c.name).join(', ') || 'none'})`,
        },
      ]);
    kc.setCurrentContext(opts.context);
  }
  if (!kc.getCurrentCluster()) throw new ConfigError([{ path: 'kubeconfig', message: 'no current cluster' }]);
  // client-node refuses plain http unless TLS verification is off; there is no TLS to verify there,
  // and kubectl accepts such kubeconfigs (local proxies, the sandbox).
  kc.clusters = kc.clusters.map((c) => (c.server.startsWith('http:') ? { ...c, skipTLSVerify: true } : c));
  return kc;
}

/** Loads one kubeconfig file; YAML that does not parse is named with the file, line and column. */
function loadFile(kc: KubeConfig, file: string): void {
  try {
    kc.loadFromFile(file);
  } catch (err) {
    const y = err as { name?: string; reason?: string; mark?: { line?: number; column?: number } };
    if (y.name !== 'YAMLException') throw err;
    const at =
      y.mark?.line !== undefined ? ` at line ${y.mark.line + 1}, column ${(y.mark.column ?? 0) + 1}` : '';
    throw new Error(`${file} is not valid YAML: ${y.reason ?? 'unreadable'}${at}`, { cause: err });
  }
}

export function createKubeClients(opts: KubeClientOptions = {}): KubeClients {
  return new KubeHttp(new KubeconfigWire(loadKubeConfig(opts)), opts.onApiRequest, opts.http);
}
