// Which cloud the functional suite talks to, read from the environment the way an operator names a
// staging cloud: OS_CLOUD + clouds.yaml (openstacksdk lookup order, secure.yaml merged), else OS_*.
// Deliberately independent of src/config: the harness must not share the code under test's mistakes.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import yaml from 'js-yaml';

export interface CloudAuth {
  authUrl: string;
  username?: string;
  userId?: string;
  password?: string;
  userDomainName?: string;
  userDomainId?: string;
  projectName?: string;
  projectId?: string;
  projectDomainName?: string;
  projectDomainId?: string;
  applicationCredentialId?: string;
  applicationCredentialSecret?: string;
}

export interface CloudEnv {
  auth: CloudAuth;
  regionName?: string;
  interface: 'public' | 'internal' | 'admin';
  /** Where the settings came from, for messages (never the secrets). */
  source: string;
}

type Env = Readonly<Record<string, string | undefined>>;
type Yaml = Record<string, unknown>;

const AUTH_KEYS: Record<string, keyof CloudAuth> = {
  auth_url: 'authUrl',
  username: 'username',
  user_id: 'userId',
  password: 'password',
  user_domain_name: 'userDomainName',
  user_domain_id: 'userDomainId',
  project_name: 'projectName',
  project_id: 'projectId',
  project_domain_name: 'projectDomainName',
  project_domain_id: 'projectDomainId',
  application_credential_id: 'applicationCredentialId',
  application_credential_secret: 'applicationCredentialSecret',
};

function cloudsFiles(env: Env, name: 'clouds' | 'secure'): string[] {
  const explicit = name === 'clouds' ? env.OS_CLIENT_CONFIG_FILE : undefined;
  const dirs = [process.cwd(), join(env.HOME ?? homedir(), '.config/openstack'), '/etc/openstack'];
  if (name === 'secure' && env.OS_CLIENT_CONFIG_FILE) dirs.unshift(dirname(env.OS_CLIENT_CONFIG_FILE));
  return [...(explicit ? [explicit] : []), ...dirs.flatMap((d) => [`${d}/${name}.yaml`, `${d}/${name}.yml`])];
}

function readCloud(file: string | undefined, cloud: string): Yaml | undefined {
  if (!file) return undefined;
  const doc = yaml.load(readFileSync(file, 'utf8')) as { clouds?: Record<string, Yaml> } | undefined;
  return doc?.clouds?.[cloud];
}

function fromCloudsYaml(env: Env, cloud: string): CloudEnv {
  const file = cloudsFiles(env, 'clouds').find((f) => existsSync(f));
  const base = readCloud(file, cloud);
  if (!base) throw new Error(`OS_CLOUD=${cloud}: no such cloud in ${file ?? 'any clouds.yaml'}`);
  const secure = readCloud(
    cloudsFiles(env, 'secure').find((f) => existsSync(f)),
    cloud,
  );
  const rawAuth = { ...(base.auth as Yaml), ...((secure?.auth as Yaml | undefined) ?? {}) };
  const auth: Partial<CloudAuth> = {};
  for (const [k, v] of Object.entries(rawAuth)) {
    const key = AUTH_KEYS[k];
    if (key && typeof v === 'string') auth[key] = v;
  }
  if (!auth.authUrl) throw new Error(`cloud ${cloud} in ${file}: auth.auth_url is missing`);
  return {
    auth: auth as CloudAuth,
    regionName: (base.region_name as string | undefined) ?? env.OS_REGION_NAME,
    interface: ((base.interface as string | undefined) ?? 'public') as CloudEnv['interface'],
    source: `clouds.yaml ${file} cloud ${cloud}`,
  };
}

function fromOsVars(env: Env): CloudEnv {
  const auth: Partial<CloudAuth> = {};
  for (const [k, key] of Object.entries(AUTH_KEYS)) {
    const v = env[`OS_${k.toUpperCase()}`];
    if (v) auth[key] = v;
  }
  if (!auth.projectName && env.OS_TENANT_NAME) auth.projectName = env.OS_TENANT_NAME;
  return {
    auth: auth as CloudAuth,
    regionName: env.OS_REGION_NAME,
    interface: (env.OS_INTERFACE ?? 'public') as CloudEnv['interface'],
    source: 'OS_* environment variables',
  };
}

/** The cloud named by the environment; throws a message saying what to set when there is none. */
export function cloudFromEnv(env: Env = process.env): CloudEnv {
  if (env.OS_CLOUD) return fromCloudsYaml(env, env.OS_CLOUD);
  if (env.OS_AUTH_URL) return fromOsVars(env);
  throw new Error(
    'functional tests need a cloud with admin rights: set OS_CLOUD (+ clouds.yaml) or OS_AUTH_URL and the ' +
      'other OS_* variables (e.g. `. /tmp/openstack-sandbox/openrc`); see docs/functional-tests.md',
  );
}

/** Knobs for clouds other than the CI stack (hosts, image, flavor). */
export interface SuiteSettings {
  sourceHost: string;
  targetHost: string;
  image?: string;
  flavor?: string;
}

export function suiteSettings(env: Env = process.env): SuiteSettings {
  return {
    sourceHost: env.DRAINER_FT_SOURCE_HOST ?? 'compute-a',
    targetHost: env.DRAINER_FT_TARGET_HOST ?? 'compute-b',
    image: env.DRAINER_FT_IMAGE,
    flavor: env.DRAINER_FT_FLAVOR,
  };
}
