// The drainer CLI as an operator runs it during the soak (`drainer release`, `restore --force`,
// `start --now`): in this process (test/cli/harness.ts), with a config file made of the sandbox's
// drainer config, pointed at the sandbox's API server and Nova.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { cli, type RunResult } from '../../test/cli/harness.ts';
import type { Fleet } from './fleet.ts';

export type DrainerCli = (...argv: string[]) => Promise<RunResult>;

export function drainerCli(fleet: Pick<Fleet, 'sandbox'>): DrainerCli {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-chaos-cli-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, fleet.sandbox.kube.kubeconfig(), { mode: 0o600 });
  // ./config.yaml is the CLI's default config file
  const config = yaml.dump({ ...fleet.sandbox.drainerConfig, kubeconfig });
  return cli({ env: { KUBECONFIG: kubeconfig }, files: { 'config.yaml': config } });
}
