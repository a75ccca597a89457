// The test overlay: the stock `daemonset/` plus only what this test cluster needs, generated into a temp
// dir and applied with `kubectl apply -k` (README "Real cluster tests" says what and why).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import type { RealEnv } from './env.ts';

export const NAMESPACE = 'drainer';
export const NODE_LABEL = { key: 'openstack-compute-node', value: 'enabled' } as const;

export interface Overlay {
  dir: string;
  remove(): void;
}

/** What a case adds to the test overlay, as an operator's own overlay would (README "Install on a cluster"). */
export interface OverlayOptions {
  /** More JSON patch operations on the DaemonSet (e.g. the runbook's agent-affinity patch). */
  readonly daemonSetOps?: readonly object[];
  /** Settings merged over the stock config.yaml, given the README's way: a config.yaml beside the
   *  kustomization and `configMapGenerator: [{name: drainer-config, behavior: merge, files: [config.yaml]}]`. */
  readonly config?: Readonly<Record<string, unknown>>;
}

/** clouds.yaml for the Secret drainer-openstack (cloud `drainer`, as the DaemonSet's OS_CLOUD says). */
export function cloudsYaml(os: Record<string, string>): string {
  const auth: Record<string, string> = {};
  const keys = [
    'auth_url',
    'username',
    'password',
    'project_name',
    'user_domain_name',
    'project_domain_name',
  ];
  for (const k of keys) {
    const v = os[`OS_${k.toUpperCase()}`];
    if (v) auth[k] = v;
  }
  const cloud = {
    auth_type: 'password',
    auth,
    region_name: os.OS_REGION_NAME,
    interface: os.OS_INTERFACE ?? 'public',
  };
  return yaml.dump({ clouds: { drainer: cloud } });
}

/** The stock config.yaml (the ConfigMap generator's file) with the node → compute host mapping added (or Nova off without one). */
function configWithMapping(
  repo: string,
  env: RealEnv,
  extra: Readonly<Record<string, unknown>> = {},
): string {
  const text = readFileSync(path.join(repo, 'daemonset/config/config.yaml'), 'utf8');
  const config = { ...(yaml.load(text) as object), ...extra } as { nova?: Record<string, unknown> };
  // without an openrc (the KubeVirt cases on their own) there is no Nova to map to: its plugin is off
  config.nova = env.novaHost
    ? { ...config.nova, hostMapping: { [env.node]: env.novaHost } }
    : { ...config.nova, enabled: false };
  return yaml.dump(config);
}

/** What the kit's cluster needs and the stock manifests do not have; everything else stays as shipped. */
export function overlayKustomization(
  repo: string,
  dir: string,
  env: RealEnv,
  apiHost: string,
  apiPort: string,
  opts: OverlayOptions = {},
) {
  const rel = path.relative(dir, path.join(repo, 'daemonset'));
  const daemonSet = [
    // no kube-proxy: the Service address 10.0.0.1 routes nowhere, so the agent uses the host's network and
    // the API server's own address (explicit env wins over what the kubelet injects)
    { op: 'add', path: '/spec/template/spec/hostNetwork', value: true },
    {
      op: 'add',
      path: '/spec/template/spec/containers/0/env/-',
      value: { name: 'KUBERNETES_SERVICE_HOST', value: apiHost },
    },
    {
      op: 'add',
      path: '/spec/template/spec/containers/0/env/-',
      value: { name: 'KUBERNETES_SERVICE_PORT', value: apiPort },
    },
    // on the host's network the port must be free there: 8080 is a popular one
    {
      op: 'add',
      path: '/spec/template/spec/containers/0/env/-',
      value: { name: 'DRAINER_SERVER_PORT', value: String(env.agentPort) },
    },
    { op: 'replace', path: '/spec/template/spec/containers/0/ports/0/containerPort', value: env.agentPort },
    {
      op: 'replace',
      path: '/spec/template/metadata/annotations/prometheus.io~1port',
      value: String(env.agentPort),
    },
    ...(opts.daemonSetOps ?? []),
  ];
  const config = configWithMapping(repo, env, opts.config);
  return {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: [rel, 'secret.yaml'],
    // the CRD the NodeMaintenance case needs (no medik8s operator here), as README "Install on a cluster" says
    components: [`${rel}/components/nodemaintenance-crd`],
    // a case's own settings: README's configMapGenerator merge of a config.yaml written beside this file
    ...(opts.config
      ? { configMapGenerator: [{ name: 'drainer-config', behavior: 'merge', files: ['config.yaml'] }] }
      : {}),
    patches: [
      { target: { kind: 'DaemonSet', name: 'drainer' }, patch: JSON.stringify(daemonSet) },
      // the generated ConfigMap (drainer-config-<hash>) is matched by its name before the hash; the patched
      // content gets its own hash, which kustomize writes into the DaemonSet too
      ...(opts.config
        ? []
        : [
            {
              target: { kind: 'ConfigMap', name: 'drainer-config' },
              patch: JSON.stringify([{ op: 'replace', path: '/data/config.yaml', value: config }]),
            },
          ]),
      // hostNetwork is forbidden from Pod Security `baseline` up: the namespace must allow it for the agent
      // (the gate pod is still checked against `restricted` by the install case, with a server-side dry run)
      {
        target: { kind: 'Namespace', name: NAMESPACE },
        patch: JSON.stringify([
          {
            op: 'replace',
            path: '/metadata/labels/pod-security.kubernetes.io~1enforce',
            value: 'privileged',
          },
        ]),
      },
    ],
  };
}

/** Writes the overlay (kustomization and the Secret from the openrc, mode 0600) into a fresh temp dir. */
export function writeOverlay(
  repo: string,
  env: RealEnv,
  os: Record<string, string>,
  api: { host: string; port: string },
  opts: OverlayOptions = {},
): Overlay {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-real-overlay-'));
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'drainer-openstack',
      namespace: NAMESPACE,
      labels: { 'app.kubernetes.io/name': 'drainer' },
    },
    type: 'Opaque',
    stringData: { 'clouds.yaml': cloudsYaml(os) },
  };
  writeFileSync(path.join(dir, 'secret.yaml'), yaml.dump(secret), { mode: 0o600 });
  const k = overlayKustomization(repo, dir, env, api.host, api.port, opts);
  if (opts.config) writeFileSync(path.join(dir, 'config.yaml'), configWithMapping(repo, env, opts.config));
  writeFileSync(path.join(dir, 'kustomization.yaml'), yaml.dump(k, { lineWidth: -1 }));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
