// The CLI as an operator runs it against a stack: a kubeconfig for its API server and a config
// file made of the sandbox's drainer config and the test's overrides, in one working directory.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { cli } from '../cli/harness.ts';
import type { Stack } from './stack.ts';

export function stackCli(stack: Pick<Stack, 'sandbox'>, overrides: Record<string, unknown> = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-stack-cli-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, stack.sandbox.kube.kubeconfig());
  const config = { ...stack.sandbox.drainerConfig, kubeconfig, ...overrides };
  return cli({ files: { 'config.yaml': yaml.dump(config) } });
}
