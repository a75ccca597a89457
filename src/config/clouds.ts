// clouds.yaml + secure.yaml, found the way openstacksdk finds them: OS_CLIENT_CONFIG_FILE, then
// ./, ~/.config/openstack/, /etc/openstack/ — the first file found wins; secure.yaml (same order,
// OS_CLIENT_SECURE_FILE first) is merged over it. The cloud is picked by name (openstack.cloud / OS_CLOUD).
import path from 'node:path';
import { ConfigError } from '../errors.ts';
import { compact, isPlainObject, type Layer, mergeLayers } from './merge.ts';
import { applyDomainDefaults, AUTH_KEYS, normalizeInterface, parseInsecure } from './openstack-keys.ts';
import { readYamlFile } from './yaml-file.ts';

export interface CloudsLookup {
  env: NodeJS.ProcessEnv;
  cwd: string;
  homeDir: string;
  /** Site config directory; /etc/openstack outside tests. */
  etcDir: string;
}

function candidates(base: 'clouds' | 'secure', envFile: string | undefined, l: CloudsLookup): string[] {
  const dirs = [l.cwd, path.join(l.homeDir, '.config', 'openstack'), l.etcDir];
  const files = dirs.flatMap((d) => ['yaml', 'yml', 'json'].map((ext) => path.join(d, `${base}.${ext}`)));
  return envFile ? [envFile, ...files] : files;
}

async function firstFile(files: readonly string[]): Promise<{ file: string; doc: unknown } | undefined> {
  for (const file of files) {
    const doc = await readYamlFile(file);
    if (doc !== undefined) return { file, doc };
  }
  return undefined;
}

const cloudsOf = (doc: unknown): Layer => (isPlainObject(doc) && isPlainObject(doc.clouds) ? doc.clouds : {});

/** A clouds.yaml cloud entry → our openstack block. Unknown clouds.yaml keys are ignored (it is not ours). */
export function cloudToOpenstack(cloud: Layer): Layer {
  const rawAuth = isPlainObject(cloud.auth) ? cloud.auth : {};
  const auth: Layer = {};
  for (const [snake, key] of Object.entries(AUTH_KEYS)) {
    if (rawAuth[snake] !== undefined) auth[key] ??= rawAuth[snake];
  }
  applyDomainDefaults(auth, rawAuth.domain_id, rawAuth.domain_name);
  const regions = Array.isArray(cloud.regions) ? cloud.regions : [];
  const onlyRegion: unknown = regions.length === 1 ? regions[0] : undefined;
  const region = cloud.region_name ?? (isPlainObject(onlyRegion) ? onlyRegion.name : onlyRegion);
  const iface = cloud.interface ?? cloud.endpoint_type;
  const insecure =
    cloud.verify !== undefined
      ? cloud.verify === false || cloud.verify === 'false'
      : parseInsecure(cloud.insecure);
  return compact({
    auth,
    regionName: region,
    interface: iface === undefined ? undefined : normalizeInterface(iface),
    cacert: cloud.cacert,
    cert: cloud.cert,
    key: cloud.key,
    insecure,
  });
}

export interface CloudsResult {
  openstack: Layer;
  /** For messages: "clouds.yaml /path (cloud x)". */
  source: string;
}

/** The named cloud's settings, or undefined when no cloud is named. */
export async function readCloud(
  name: string | undefined,
  l: CloudsLookup,
): Promise<CloudsResult | undefined> {
  if (!name) return undefined;
  const clouds = await firstFile(candidates('clouds', l.env.OS_CLIENT_CONFIG_FILE, l));
  if (!clouds) {
    const where = candidates('clouds', l.env.OS_CLIENT_CONFIG_FILE, l).filter((f) => f.endsWith('.yaml'));
    throw new ConfigError([
      {
        path: 'openstack.cloud',
        message: `cloud "${name}" asked for, but no clouds.yaml found (looked for ${where.join(', ')})`,
      },
    ]);
  }
  const secure = await firstFile(candidates('secure', l.env.OS_CLIENT_SECURE_FILE, l));
  const entry = cloudsOf(clouds.doc)[name];
  const secureEntry = secure ? cloudsOf(secure.doc)[name] : undefined;
  if (!isPlainObject(entry)) {
    const known = Object.keys(cloudsOf(clouds.doc));
    throw new ConfigError([
      {
        path: 'openstack.cloud',
        message: `no cloud "${name}" in ${clouds.file} (clouds there: ${known.join(', ') || 'none'})`,
      },
    ]);
  }
  const merged = isPlainObject(secureEntry) ? mergeLayers(entry, secureEntry) : entry;
  const files = secure && isPlainObject(secureEntry) ? `${clouds.file} + ${secure.file}` : clouds.file;
  return { openstack: cloudToOpenstack(merged), source: `${files} (cloud ${name})` };
}
