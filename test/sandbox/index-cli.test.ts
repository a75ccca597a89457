import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const KUBECTL = '/usr/bin/kubectl';
const hasKubectl = existsSync(KUBECTL);
if (!hasKubectl) console.warn('SKIPPED: `drainer sandbox` with kubectl (no kubectl at /usr/bin/kubectl)');

const cli = new URL('../../src/cli.ts', import.meta.url).pathname;

describe.skipIf(!hasKubectl)('drainer sandbox', () => {
  it('starts, answers kubectl, and stops cleanly on SIGINT', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'drainer-sandbox-'));
    const child = spawn(process.execPath, [cli, 'sandbox', '--state-dir', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    try {
      await new Promise<void>((ready, fail) => {
        child.stdout.on('data', () => out.includes('Ctrl-C') && ready());
        void exited.then(() => fail(new Error(`sandbox exited early:\n${out}`)));
      });
      const kc = join(dir, 'kubeconfig');
      expect(out).toContain(`kubectl --kubeconfig ${kc} get nodes`);

      const nodes = await run(KUBECTL, ['--kubeconfig', kc, 'get', 'nodes', '-o', 'name']);
      await run(KUBECTL, ['--kubeconfig', kc, 'cordon', 'node-2']);
      const cordoned = await run(KUBECTL, [
        '--kubeconfig',
        kc,
        'get',
        'node',
        'node-2',
        '-o',
        'jsonpath={.spec.unschedulable}',
      ]);

      expect(nodes.stdout.trim().split('\n')).toEqual([
        'node/node-1',
        'node/node-2',
        'node/node-3',
        'node/node-4',
      ]);
      expect(cordoned.stdout).toBe('true');
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(out).toContain('stopping the sandbox');
  });
});
