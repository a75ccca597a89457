// One running sandbox per state directory: a live owner is refused before anything is rewritten,
// a dead one's file is taken over, and the directory is given back on close.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { claimStateDir, OWNER_FILE } from '../../src/sandbox/state-dir.ts';

const scratch = () => mkdtempSync(path.join(tmpdir(), 'drainer-state-dir-'));

describe('sandbox state directory', () => {
  it('is claimed, described with the API address, and given back', async () => {
    const dir = scratch();
    const claim = await claimStateDir(dir);
    claim.describe('http://127.0.0.1:1234');
    expect(JSON.parse(readFileSync(path.join(dir, OWNER_FILE), 'utf8'))).toEqual({
      pid: process.pid,
      kube: 'http://127.0.0.1:1234',
    });
    claim.release();
    expect(existsSync(path.join(dir, OWNER_FILE))).toBe(false);
  });

  it('refuses a directory whose owner still runs, naming it', async () => {
    const dir = scratch();
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      writeFileSync(
        path.join(dir, OWNER_FILE),
        JSON.stringify({ pid: other.pid, kube: 'http://127.0.0.1:7' }),
      );
      const err = await claimStateDir(dir).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).issues[0]?.message).toMatch(
        new RegExp(
          `^a sandbox is running in .+ \\(pid ${other.pid ?? 0}, Kubernetes API http://127\\.0\\.0\\.1:7\\)`,
        ),
      );
    } finally {
      other.kill();
    }
  });

  it("takes over a dead owner's file", async () => {
    const dir = scratch();
    const gone = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((done) => gone.on('exit', done));
    writeFileSync(path.join(dir, OWNER_FILE), JSON.stringify({ pid: gone.pid }));
    const claim = await claimStateDir(dir);
    expect(JSON.parse(readFileSync(path.join(dir, OWNER_FILE), 'utf8'))).toEqual({ pid: process.pid });
    claim.release();
  });
});
