// The Kubernetes client factory: one KubeConfig, the generated APIs for whoever prefers them, and
// the raw JSON requester that this folder uses. Every request is counted through onApiRequest.
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { existsSync } from 'node:fs';
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  IsomorphicFetchHttpLibrary,
  KubeConfig,
  PolicyV1Api,
  ServerConfiguration,
  createConfiguration,
  wrapHttpLibrary,
  type HttpLibrary,
} from '@kubernetes/client-node';
import { ConfigError } from '../core/errors.ts';
import { connectionError, errorForStatus, parseStatus } from './errors.ts';
import { KubeHttp, type ApiRequestHook, type KubeTransport } from './http.ts';

export type { ApiRequestHook } from './http.ts';

export interface KubeClientOptions {
  /** A kubeconfig path, or a KUBECONFIG-style list (first file wins, later ones merged). */
  readonly kubeconfigPath?: string;
  readonly kubeconfigYaml?: string;
  /** Use the ServiceAccount (the caller decides, e.g. when KUBERNETES_SERVICE_HOST is set). */
  readonly inCluster?: boolean;
  readonly homeDir?: string;
  readonly onApiRequest?: ApiRequestHook;
}

export interface KubeClients extends KubeTransport {
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly custom: CustomObjectsApi;
  readonly policy: PolicyV1Api;
  // request(): raw JSON, answers ≥ 400 throw typed errors; send(): any HTTP answer (Status details).
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
      kc.loadFromFile(first);
      for (const f of rest) {
        const more = new KubeConfig();
        more.loadFromFile(f);
        kc.mergeConfig(more);
      }
    }
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new ConfigError([{ path: 'kubeconfig', message: why }], { cause: err });
  }
  if (!kc.getCurrentCluster()) throw new ConfigError([{ path: 'kubeconfig', message: 'no current cluster' }]);
  // client-node refuses plain http unless TLS verification is off; there is no TLS to verify there,
  // and kubectl accepts such kubeconfigs (local proxies, the sandbox).
  kc.clusters = kc.clusters.map((c) => (c.server.startsWith('http:') ? { ...c, skipTLSVerify: true } : c));
  return kc;
}

function countingLibrary(http: KubeHttp): HttpLibrary {
  const inner = new IsomorphicFetchHttpLibrary();
  return wrapHttpLibrary({
    async send(req) {
      try {
        const res = await inner.send(req).toPromise();
        http.count(String(res.httpStatusCode));
        return res;
      } catch (err) {
        http.count('error');
        throw err;
      }
    },
  });
}

export function createKubeClients(opts: KubeClientOptions = {}): KubeClients {
  const kc = loadKubeConfig(opts);
  const http = new KubeHttp(kc, opts.onApiRequest);
  const server = kc.getCurrentCluster()?.server ?? '';
  const config = createConfiguration({
    baseServer: new ServerConfiguration(server, {}),
    authMethods: { default: kc },
    httpApi: countingLibrary(http),
  });
  return {
    kc,
    core: new CoreV1Api(config),
    apps: new AppsV1Api(config),
    custom: new CustomObjectsApi(config),
    policy: new PolicyV1Api(config),
    request: (req) => http.request(req),
    send: (req, o) => http.send(req, o),
  };
}

/**
 * Turns what the generated APIs throw (ApiException with a raw-text body, or a fetch failure)
 * into the typed errors of src/core/errors.ts. Anything else is returned unchanged.
 */
export function toKubeError(err: unknown, method: string, path: string): unknown {
  if (err instanceof ApiException) {
    const code = Number(err.code);
    const body: unknown = err.body;
    const status = typeof body === 'string' ? parseStatus(code, body) : (body ?? { code });
    return errorForStatus(code, status, method, path);
  }
  if (err instanceof TypeError) return connectionError(err, method, path);
  return err;
}
