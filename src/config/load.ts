// Loads the effective configuration.
//
// Layers, lowest first: schema defaults < config file (--config-path, default ./config.yaml)
// < DRAINER_* env (and NODE_NAME, KUBECONFIG below their DRAINER_ names) < flags.
// OpenStack credentials are resolved field by field into config.openstack, lowest first:
//   clouds.yaml (+ secure.yaml) < OS_* env < config file (legacy top-level keys < `openstack:` block)
//   < DRAINER_OPENSTACK_* env < flags.
// So consumers read only `Config.openstack`. Every problem in every layer is collected first and
// thrown as one ConfigError, each issue naming its key path and where the value came from.
import os from 'node:os';
import path from 'node:path';
import type { ConfigIssue } from '../errors.ts';
import { ConfigError } from '../errors.ts';
import { readCloud, type CloudsResult } from './clouds.ts';
import { readDrainerEnv } from './env.ts';
import { unknownDrainerVars } from './env-unknown.ts';
import { toConfigIssues } from './issues.ts';
import { extractLegacy } from './legacy.ts';
import { compact, isPlainObject, type Layer, mergeLayers } from './merge.ts';
import { readOsEnv } from './os-env.ts';
import { type Config, configSchema } from './schema.ts';
import { leaves } from './schema-walk.ts';
import { readYamlFile } from './yaml-file.ts';

/** Flags every command accepts (the CLI maps its argv onto these). */
export interface Flags {
  configPath: string;
  logLevel: string;
  dryRun: boolean;
  /** → nodeName */
  node: string;
  /** → evacuation.timeout (the old tool's -time-out=MINUTES arrives here as "<n>m"). */
  evacuationTimeout: string | number;
  /** kubectl's global flags, for `kubectl drainer …`: → kubeconfig, kubeContext, fleet.namespace */
  kubeconfig: string;
  context: string;
  namespace: string;
}

export interface LoadOptions {
  argv?: Partial<Flags>;
  configPath?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  homeDir?: string;
  /** openstacksdk's site directory, /etc/openstack; tests point it elsewhere. */
  etcDir?: string;
  /** Told each thing worth a warning and no error (a DRAINER_* variable that is no setting). */
  onWarning?: (text: string) => void;
  /**
   * The configuration the agents run with (the cluster's drainer-config ConfigMap, parsed), below
   * the local file: what a read-only command weighs when it talks to the cluster.
   */
  base?: { readonly doc: unknown; readonly source: string };
  /** OpenStack credentials from the cluster (its Secret's clouds.yaml cloud), below every local source. */
  baseCloud?: CloudsResult;
  /** Told the layer above the base (local file, environment, flags), to say what overrides the base. */
  onLocal?: (layer: Layer) => void;
}

export const DEFAULT_CONFIG_PATH = './config.yaml';

const FLAG_SOURCES: Record<string, string> = {
  logLevel: '--log-level',
  dryRun: '--dry-run',
  nodeName: '--node',
  'evacuation.timeout': '--evacuation-timeout',
  kubeconfig: '--kubeconfig',
  kubeContext: '--context',
  'fleet.namespace': '--namespace',
};

/** Records are replaced as a whole by a higher layer, not merged entry by entry. */
const ATOMIC = new Set(
  leaves()
    .filter((l) => l.kind === 'record')
    .map((l) => l.path.join('.')),
);

function flagsLayer(argv: Partial<Flags>): Layer {
  return compact({
    logLevel: argv.logLevel,
    dryRun: argv.dryRun,
    nodeName: argv.node,
    evacuation: { timeout: argv.evacuationTimeout },
    kubeconfig: argv.kubeconfig,
    kubeContext: argv.context,
    fleet: { namespace: argv.namespace },
  });
}

/** Validates one layer on its own, so each issue can name where its value came from. */
function validateLayer(layer: Layer, sourceOf: (path: string) => string): ConfigIssue[] {
  const r = configSchema.safeParse(layer);
  if (r.success) return [];
  return r.error.issues.flatMap((zi) => toConfigIssues([zi], layer, sourceOf(zi.path.map(String).join('.'))));
}

function longestPrefix(sources: Map<string, string>, key: string, fallback: string): string {
  for (let p = key; p; p = p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '') {
    const s = sources.get(p);
    if (s) return s;
  }
  return fallback;
}

async function readConfigFile(file: string, explicit: boolean): Promise<Layer> {
  const doc = await readYamlFile(file);
  if (doc === undefined) {
    if (explicit)
      throw new ConfigError([{ path: file, message: 'config file not found (given by --config-path)' }]);
    return {};
  }
  return docLayer(doc, file);
}

/** A parsed config.yaml (a file, or the cluster's ConfigMap) as a layer. */
function docLayer(doc: unknown, source: string): Layer {
  if (doc === null || doc === undefined) return {};
  if (!isPlainObject(doc)) {
    throw new ConfigError([{ path: source, message: 'expected a mapping of settings at the top level' }]);
  }
  // `auth:` with every child commented out reads as null: treat empty keys as unset.
  const { rest, openstack } = extractLegacy(dropNulls(doc));
  // The file's own openstack: block wins over the legacy keys.
  return openstack ? mergeLayers({ openstack }, rest) : rest;
}

function dropNulls(layer: Layer): Layer {
  const out: Layer = {};
  for (const [k, v] of Object.entries(layer)) {
    if (v === null) continue;
    out[k] = isPlainObject(v) ? dropNulls(v) : v;
  }
  return out;
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object') {
    for (const inner of Object.values(v)) deepFreeze(inner);
    Object.freeze(v);
  }
  return v;
}

/** The named cloud of a local clouds.yaml, else the cluster's (opts.baseCloud), else none. */
async function cloudOf(
  name: string | undefined,
  opts: LoadOptions,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<CloudsResult | undefined> {
  const lookup = { env, cwd, homeDir: opts.homeDir ?? os.homedir(), etcDir: opts.etcDir ?? '/etc/openstack' };
  return (await readCloud(name, lookup)) ?? opts.baseCloud;
}

export async function loadConfig(opts: LoadOptions = {}): Promise<Config> {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const explicit = opts.configPath ?? opts.argv?.configPath;
  const file = path.resolve(cwd, explicit ?? DEFAULT_CONFIG_PATH);

  const localFile = await readConfigFile(file, explicit !== undefined);
  const base = opts.base ? docLayer(opts.base.doc, opts.base.source) : {};
  const fileLayer = mergeLayers(base, localFile, ATOMIC);
  const envLayer = readDrainerEnv(env);
  for (const w of opts.onWarning ? unknownDrainerVars(env) : []) opts.onWarning?.(w);
  const flags = flagsLayer(opts.argv ?? {});
  opts.onLocal?.(mergeLayers(mergeLayers(localFile, envLayer.layer, ATOMIC), flags, ATOMIC));
  const issues: ConfigIssue[] = [
    ...(opts.base ? validateLayer(base, () => opts.base?.source ?? '') : []),
    ...validateLayer(localFile, () => file),
    ...envLayer.issues,
    ...validateLayer(envLayer.layer, (k) => longestPrefix(envLayer.sources, k, 'environment')),
    ...validateLayer(flags, (k) => longestPrefix(new Map(Object.entries(FLAG_SOURCES)), k, 'flags')),
  ];
  if (issues.length > 0) throw new ConfigError(issues);

  const upper = mergeLayers(mergeLayers(fileLayer, envLayer.layer, ATOMIC), flags, ATOMIC);
  const upperOs = isPlainObject(upper.openstack) ? upper.openstack : {};
  const cloudName = typeof upperOs.cloud === 'string' ? upperOs.cloud : env.OS_CLOUD || undefined;
  const cloud = await cloudOf(cloudName, opts, env, cwd);
  const osEnv = readOsEnv(env);
  const cloudLayer: Layer = cloud ? { openstack: { ...cloud.openstack, cloud: cloudName } } : {};
  const osEnvLayer: Layer = Object.keys(osEnv).length > 0 ? { openstack: osEnv } : {};
  issues.push(
    ...(cloud ? validateLayer(cloudLayer, () => cloud.source) : []),
    ...validateLayer(osEnvLayer, () => 'OS_* environment'),
  );
  if (issues.length > 0) throw new ConfigError(issues);

  const merged = mergeLayers(mergeLayers(cloudLayer, osEnvLayer), upper, ATOMIC);
  const result = configSchema.safeParse(merged);
  if (!result.success)
    throw new ConfigError(toConfigIssues(result.error.issues, merged, 'the merged configuration'));
  return deepFreeze(result.data);
}
