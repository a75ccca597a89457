// Runs each shell block of docs/sandbox.md as written, in a directory where `npx drainer` works, so a
// page that says a command works fails here when it does not (issue 52 item 4). What to do with a block
// is told by an HTML comment right before it in the markdown:
//   <!-- docs-test: background: TEXT -->  start it, wait until it prints TEXT, stop it at the end
//   <!-- docs-test: skip: WHY -->          do not run it
// Any other `sh`/`console` block runs to the end and must exit 0.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, copyFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** One reader's terminal: the page's first kubectl block exports KUBECONFIG for all that follow. */
const TERMINAL = 'export KUBECONFIG=$PWD/.sandbox/kubeconfig';

interface Block {
  readonly line: number;
  readonly marker: { kind: 'background'; waitFor: string } | { kind: 'skip'; why: string } | undefined;
  readonly script: string;
}

/** The shell blocks of a page with the marker before each; `$ ` prompts and example output dropped. */
function shellBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(sh|bash|console)\s*$/.exec(lines[i] ?? '');
    if (!fence) continue;
    const before = (lines[i - 1] ?? '').trim();
    const m = /^<!-- docs-test: (background|skip): (.+) -->$/.exec(before);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && lines[j] !== '```'; j++) body.push(lines[j] ?? '');
    const commands =
      fence[1] === 'console' ? body.filter((l) => l.startsWith('$ ')).map((l) => l.slice(2)) : body;
    blocks.push({
      line: i + 1,
      marker: m
        ? m[1] === 'skip'
          ? { kind: 'skip', why: m[2]! }
          : { kind: 'background', waitFor: m[2]! }
        : undefined,
      script: commands.join('\n'),
    });
    i = j;
  }
  return blocks;
}

async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const next = await new Promise<boolean>((resolve) => {
      const s = createServer()
        .once('error', () => resolve(false))
        .listen(port + 1, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (next && port < 65000) return port;
  }
}

describe('docs/sandbox.md: every shell block does what the page says', () => {
  const blocks = shellBlocks(readFileSync(path.join(ROOT, 'docs/sandbox.md'), 'utf8'));
  let dir = '';
  let port = 0;
  const background: ChildProcess[] = [];
  const env = (): NodeJS.ProcessEnv => ({
    ...process.env,
    PATH: `${path.join(ROOT, '.node/bin')}:${process.env.PATH ?? ''}`,
  });
  /** The page's fixed port (and its +1) replaced by free ones. */
  const localize = (script: string): string =>
    script.replace(/4012([34])/g, (_, d: string) => String(port + (d === '4' ? 1 : 0)));

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'docs-blocks-'));
    copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
    for (const x of ['bin', 'src', 'scenarios', 'node_modules', 'tsconfig.json'])
      symlinkSync(path.join(ROOT, x), path.join(dir, x));
    port = await freePortPair();
  });

  afterAll(async () => {
    // Last started first (the watch, the daemon, then the sandbox they talk to). The whole group is
    // signalled (npx, then node); one that outlives SIGTERM (seen once: the sandbox) is killed after.
    for (const child of background.reverse()) {
      if (!child.pid) continue;
      const group = -child.pid;
      const exited = new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(undefined)));
      process.kill(group, 'SIGTERM');
      await exited;
      try {
        process.kill(group, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('has shell blocks to run', () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  for (const block of blocks) {
    const name = `block at line ${block.line}${block.marker?.kind === 'skip' ? ` (skipped: ${block.marker.why})` : ''}`;
    if (block.marker?.kind === 'skip') {
      it.skip(name, () => {});
      continue;
    }
    it(
      name,
      async () => {
        const script = localize(block.script);
        if (block.marker?.kind === 'background') {
          const waitFor = block.marker.waitFor;
          const child = spawn('bash', ['-c', `${TERMINAL}\n${script}`], {
            cwd: dir,
            env: env(),
            detached: true, // its own process group: stopped with all it started
          });
          background.push(child);
          let out = '';
          await new Promise<void>((resolve, reject) => {
            const look = (chunk: Buffer): void => {
              out += chunk.toString();
              if (out.includes(waitFor)) resolve();
            };
            child.stdout?.on('data', look);
            child.stderr?.on('data', look);
            child.once('exit', (code) =>
              reject(new Error(`exited ${code} before printing "${waitFor}":\n${out}`)),
            );
          });
          return;
        }
        const run = spawnSync('bash', ['-ec', `${TERMINAL}\n${script}`], {
          cwd: dir,
          env: env(),
          encoding: 'utf8',
          timeout: 60_000,
        });
        expect(run.status, `${script}\n${run.stdout}\n${run.stderr}`).toBe(0);
      },
      90_000,
    );
  }
});
