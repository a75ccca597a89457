// A private temp dir per test file holding the clouds.yaml and drainer config the CLI runs read.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import type { CloudAuth, CloudEnv } from './cloud-env.ts';
import type { Cleanup } from './cleanup.ts';

const SNAKE: Record<keyof CloudAuth, string> = {
  authUrl: 'auth_url',
  username: 'username',
  userId: 'user_id',
  password: 'password',
  userDomainName: 'user_domain_name',
  userDomainId: 'user_domain_id',
  projectName: 'project_name',
  projectId: 'project_id',
  projectDomainName: 'project_domain_name',
  projectDomainId: 'project_domain_id',
  applicationCredentialId: 'application_credential_id',
  applicationCredentialSecret: 'application_credential_secret',
};

/** A clouds.yaml entry as an operator writes it. */
export function cloudsEntry(cloud: CloudEnv): Record<string, unknown> {
  const auth: Record<string, string> = {};
  for (const [k, v] of Object.entries(cloud.auth)) if (v) auth[SNAKE[k as keyof CloudAuth]] = v;
  return {
    auth_type: cloud.auth.applicationCredentialId ? 'v3applicationcredential' : 'password',
    auth,
    ...(cloud.regionName ? { region_name: cloud.regionName } : {}),
    interface: cloud.interface,
    identity_api_version: 3,
  };
}

export class RunDir {
  readonly path: string;
  readonly cloudsFile: string;

  private constructor(path: string) {
    this.path = path;
    this.cloudsFile = join(path, 'clouds.yaml');
  }

  static async create(cleanup: Cleanup): Promise<RunDir> {
    const dir = new RunDir(await mkdtemp(join(tmpdir(), 'drainer-ft-')));
    cleanup.add(`temp dir ${dir.path}`, () => rm(dir.path, { recursive: true, force: true }));
    return dir;
  }

  /** Writes clouds.yaml (mode 0600: it holds passwords) with one entry per named cloud. */
  async writeClouds(clouds: Record<string, CloudEnv>): Promise<string> {
    const doc = { clouds: Object.fromEntries(Object.entries(clouds).map(([n, c]) => [n, cloudsEntry(c)])) };
    await writeFile(this.cloudsFile, yaml.dump(doc), { mode: 0o600 });
    return this.cloudsFile;
  }

  /** Writes a drainer config file; returns its path. */
  async writeConfig(name: string, config: unknown): Promise<string> {
    const file = join(this.path, `${name}.yaml`);
    await writeFile(file, yaml.dump(config), { mode: 0o600 });
    return file;
  }
}

/** A drainer config that exercises only Nova, with short polls so runs finish promptly. */
export function novaOnlyConfig(
  nova: Record<string, unknown> = {},
  evacuation: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    evacuation,
    nova: { pollInterval: 1, retryBackoff: 1, ...nova },
    kubevirt: { enabled: false },
    drain: { enabled: false },
  };
}
