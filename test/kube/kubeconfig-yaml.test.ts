// A kubeconfig that is not YAML is one line naming the file, line and column: no code frame.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createKubeClients } from '../../src/kube/client.ts';
import { ConfigError } from '../../src/errors.ts';
import { cli } from '../cli/harness.ts';

const broken = () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-kubeconfig-')), 'kubeconfig');
  writeFileSync(file, 'apiVersion: v1\nclusters:\n- cluster: {server: "http://x\n  bad: [\n');
  return file;
};

describe('a kubeconfig that is not YAML', () => {
  it('is a ConfigError of one line with the file, line and column', () => {
    const file = broken();
    let err: unknown;
    try {
      createKubeClients({ kubeconfigPath: file });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const issue = (err as ConfigError).issues[0];
    expect(issue?.path).toBe('kubeconfig');
    expect(issue?.message).toMatch(new RegExp(`^${file} is not valid YAML: .+ at line \\d+, column \\d+$`));
  });

  it('drainer status prints that one line and exits 2', async () => {
    const file = broken();
    const r = await cli({ env: { KUBECONFIG: file } })('status');
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.stderr).toMatch(/^error: kubeconfig: .+ is not valid YAML: /);
  });
});
