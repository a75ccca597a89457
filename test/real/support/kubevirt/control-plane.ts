// KubeVirt's own manifests on the real cluster, from the real binaries: virt-operator's `--dump-install-strategy`
// writes the install strategy (CRDs, RBAC, Services, webhooks, APIServices, as the operator would deploy them)
// into a ConfigMap; the suite reads it, applies what a control plane running as host processes needs, and checks
// that virt-api and virt-controller answer. Nothing of KubeVirt is in this repository: the binaries come from
// the settings (support/env.ts, KubeVirtEnv).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import https from 'node:https';
import { gunzipSync } from 'node:zlib';
import yaml from 'js-yaml';
import { waitFor } from '../../../functional/support/wait.ts';
import type { KubeVirtEnv } from '../env.ts';
import type { Kubectl, Obj } from '../kubectl.ts';

/** What the suite takes from the install strategy, and why the rest is left out. */
const APPLIED = new Set([
  'ServiceAccount', // virt-handler's identity: the emulated node side acts as it
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'CustomResourceDefinition',
  'Service', // virt-api's, given manual Endpoints (no kube-proxy, no pods: virt-api runs on the host)
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'APIService',
]);
// Left out: Deployments and the DaemonSet (virt-api and virt-controller run as host processes, virt-handler is
// emulated), virt-operator's own webhook and Service, certificate Secrets (the host processes' certificates come
// from their flags), ConfigMaps, OpenShift's SecurityContextConstraints and Route, the common instance types and
// preferences, and ValidatingAdmissionPolicy/-Binding (admissionregistration.k8s.io/v1 is served from
// Kubernetes v1.30; the kit is v1.26: virt-handler's node restriction policy is not enforced here).

export interface InstallStrategy {
  version: string;
  objects: Obj[];
}

const run = (file: string, args: string[], env: NodeJS.ProcessEnv = process.env) =>
  new Promise<string>((resolve, reject) =>
    execFile(file, args, { env, timeout: 120_000, maxBuffer: 64 << 20 }, (err, out, stderr) =>
      err
        ? reject(new Error(`${file} ${args.join(' ')}: ${stderr.trim().split('\n').slice(-3).join(' ')}`))
        : resolve(out),
    ),
  );

/** Runs virt-operator's dump, reads the ConfigMap it wrote, and deletes it. */
export async function dumpInstallStrategy(
  k: Kubectl,
  kv: KubeVirtEnv,
  kubeconfig: string,
): Promise<InstallStrategy> {
  await k.run(['create', 'namespace', kv.namespace]);
  const operator = path.join(kv.bin, 'virt-operator');
  await run(operator, ['--dump-install-strategy', '--kubeconfig', kubeconfig], {
    ...process.env,
    // the image names only fill the Deployments the suite leaves out; the operator refuses to start without one
    OPERATOR_IMAGE: 'quay.io/kubevirt/virt-operator:suite',
  });
  const list = await k.get(['configmaps', '-n', kv.namespace, '-l', 'kubevirt.io/install-strategy']);
  const newest = ((list?.items ?? []) as Obj[]).sort((a, b) =>
    String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)),
  )[0];
  if (!newest) throw new Error(`${operator} --dump-install-strategy wrote no ConfigMap in ${kv.namespace}`);
  for (const cm of list.items as Obj[])
    await k.run(['delete', 'configmap', '-n', kv.namespace, cm.metadata.name]);
  const text = gunzipSync(Buffer.from(newest.data.manifests as string, 'base64')).toString('utf8');
  // the KubeVirt CRD is not in the install strategy (virt-operator's own manifest carries it)
  const kubevirtCrd = await run(path.join(kv.bin, 'resource-generator'), ['--type=kv']);
  return {
    version: newest.metadata.annotations?.['kubevirt.io/install-strategy-version'] ?? 'unknown',
    objects: [...yaml.loadAll(text), ...yaml.loadAll(kubevirtCrd)].filter((o): o is Obj =>
      Boolean(o && typeof o === 'object'),
    ),
  };
}

/** The objects to apply, with virt-api's CA in every caBundle and manual Endpoints for its Service. */
export function forHostProcesses(strategy: InstallStrategy, kv: KubeVirtEnv): Obj[] {
  const caBundle = Buffer.from(readFileSync(kv.apiCa)).toString('base64');
  const [host, port] = kv.api.split(':');
  const out: Obj[] = [];
  for (const o of strategy.objects.filter((x) => APPLIED.has(x.kind))) {
    const obj = structuredClone(o);
    if (obj.kind === 'ValidatingWebhookConfiguration' || obj.kind === 'MutatingWebhookConfiguration') {
      // virt-api's webhooks only: virt-operator's own (it guards the KubeVirt CR) has no operator to answer here
      obj.webhooks = ((obj.webhooks ?? []) as Obj[]).filter(
        (w) => w.clientConfig?.service?.name === 'virt-api',
      );
      if (obj.webhooks.length === 0) continue;
      for (const w of obj.webhooks) {
        w.clientConfig = { ...w.clientConfig, caBundle };
        // matchConditions are served from Kubernetes v1.28 (beta) on; the kit is v1.26. KubeVirt's only one keeps
        // its eviction webhook to pods named virt-launcher-…; without it every eviction reaches virt-api's
        // admitter, which allows those of other pods (they then meet their PodDisruptionBudgets as before)
        delete w.matchConditions;
      }
    }
    if (obj.kind === 'APIService') obj.spec = { ...obj.spec, caBundle, insecureSkipTLSVerify: false };
    if (obj.kind === 'Service') {
      if (obj.metadata.name !== 'virt-api') continue;
      // no pods: the Service's address is virt-api's own (the kit has no kube-proxy, and its API server dials a
      // Service's ClusterIP unless --enable-aggregator-routing, then the Endpoints: both lead to virt-api)
      delete obj.spec.selector;
      obj.spec.clusterIP = host;
      obj.spec.clusterIPs = [host];
      out.push({
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'virt-api', namespace: obj.metadata.namespace },
        subsets: [
          {
            addresses: [{ ip: host }],
            ports: (obj.spec.ports as Obj[]).map((p) => ({
              name: p.name,
              port: Number(port),
              protocol: 'TCP',
            })),
          },
        ],
      });
    }
    out.push(obj);
  }
  return out;
}

/** The KubeVirt CR the cases run under: emulation (no /dev/kvm on the emulated nodes), no serial console log. */
export function kubevirtCr(kv: KubeVirtEnv): Obj {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'KubeVirt',
    metadata: { name: 'kubevirt', namespace: kv.namespace },
    spec: {
      imagePullPolicy: 'IfNotPresent',
      configuration: {
        developerConfiguration: { useEmulation: true },
        virtualMachineOptions: { disableSerialConsoleLog: {} },
      },
    },
  };
}

/** GET over https trusting `ca` (virt-controller's health endpoint). */
function httpsGet(url: string, ca: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca, timeout: 5_000, checkServerIdentity: () => undefined }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${url}: timeout`)));
  });
}

export interface ControlPlane {
  /** virt-api's version, read through the API server's aggregation layer. */
  apiVersion: string;
  /** The holder of virt-controller's leader lease. */
  controllerLeader: string;
}

/**
 * Applies the strategy's objects and the KubeVirt CR (phase Deployed, as virt-operator marks it), then waits until
 * virt-api serves through the aggregation layer and virt-controller holds its lease and is healthy.
 */
export async function installControlPlane(
  k: Kubectl,
  kv: KubeVirtEnv,
  kubeconfig: string,
  virtApi: { start(): Promise<void>; log: string },
): Promise<ControlPlane> {
  const strategy = await dumpInstallStrategy(k, kv, kubeconfig);
  const objects = forHostProcesses(strategy, kv);
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
  const rest = objects.filter((o) => o.kind !== 'CustomResourceDefinition');
  const apply = (items: Obj[]) =>
    k.ok(
      ['apply', '--server-side', '--force-conflicts', '--field-manager=drainer-real-kubevirt', '-f', '-'],
      {
        input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
        timeoutMs: 180_000,
      },
    );
  await apply(crds);
  await k.ok([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    ...crds.map((c) => `crd/${c.metadata.name}`),
  ]);
  await apply(rest);
  // virt-api runs as its ServiceAccount, which the strategy's objects just made
  await virtApi.start();

  const apiService = 'v1.subresources.kubevirt.io';
  await waitFor(
    async () =>
      ((await k.get(['apiservice', apiService]))?.status?.conditions as Obj[] | undefined)?.some(
        (c) => c.type === 'Available' && c.status === 'True',
      ) || undefined,
    {
      what: `APIService ${apiService} Available (virt-api at ${kv.api} in netns ${kv.netns}, log ${virtApi.log})`,
      timeoutMs: 120_000,
      intervalMs: 1_000,
    },
  );
  const version = (await k.raw('/apis/subresources.kubevirt.io/v1/version')).gitVersion as string;

  await apply([kubevirtCr(kv)]);
  await k.ok(
    [
      'patch',
      'kubevirt',
      'kubevirt',
      '-n',
      kv.namespace,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        // what virt-operator writes once deployed; virt-api's mutating webhook defaults a VMI's
        // architecture from status.defaultArchitecture (without it every VMI is refused: "unsupported architecture")
        status: {
          phase: 'Deployed',
          observedKubeVirtVersion: version,
          targetKubeVirtVersion: version,
          defaultArchitecture: 'amd64',
        },
      }),
    ],
    { timeoutMs: 60_000 },
  );

  const ca = readFileSync(kv.apiCa);
  const leader = await waitFor(
    async () => {
      const lease = await k.get(['lease', '-n', kv.namespace, 'virt-controller']);
      const renewed = Date.parse(lease?.spec?.renewTime ?? '');
      return lease && Date.now() - renewed < 60_000 ? (lease.spec.holderIdentity as string) : undefined;
    },
    { what: `virt-controller to hold its lease in ${kv.namespace}`, timeoutMs: 120_000 },
  );
  await waitFor(
    async () =>
      (await httpsGet(`${kv.controller}/healthz`, ca).catch(() => undefined))?.status === 200
        ? true
        : undefined,
    { what: `virt-controller healthy at ${kv.controller}`, timeoutMs: 60_000 },
  );
  return { apiVersion: version, controllerLeader: leader };
}

/**
 * Deletes what routes requests to virt-api (its webhook configurations and aggregated APIServices) before the
 * suite stops it: its eviction webhooks fail closed and, without matchConditions on v1.26, see every eviction,
 * so the files after this one could evict nothing; an unavailable APIService also breaks discovery and namespace
 * deletion. The next KubeVirt run applies them again.
 */
export async function removeVirtApiRoutes(k: Kubectl): Promise<void> {
  const toVirtApi = (o: Obj) =>
    o.spec?.service?.name === 'virt-api' ||
    ((o.webhooks ?? []) as Obj[]).some((w) => w.clientConfig?.service?.name === 'virt-api');
  for (const kind of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations', 'apiservices']) {
    const names = (((await k.get([kind]))?.items ?? []) as Obj[])
      .filter(toVirtApi)
      .map((o) => o.metadata.name as string);
    if (names.length > 0) await k.ok(['delete', kind, ...names, '--wait=false']);
  }
}
