// The image: a build stage with dev dependencies compiles src/ to dist/, a run stage with production
// dependencies only starts `node dist/cli.js` as a numeric non-root user. No Docker engine runs
// here, so check the Dockerfile's shape and that the build it runs yields a working dist/cli.js.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const dockerfile = readFileSync('Dockerfile', 'utf8');

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name: string | undefined;
  steps: Instruction[];
}

/** Stages and their instructions (comments and continuation lines handled). */
function stages(text: string): Stage[] {
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  const out: Stage[] = [];
  for (const line of lines) {
    const m = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (!m || line.trim().startsWith('#')) continue;
    const [, op = '', args = ''] = m;
    if (op === 'FROM') {
      const [image = '', , name] = args.trim().split(/\s+/);
      out.push({ from: image, name, steps: [] });
    } else out.at(-1)?.steps.push({ op, args: args.trim() });
  }
  return out;
}

const args = (s: Stage, op: string) => s.steps.filter((i) => i.op === op).map((i) => i.args);

describe('Dockerfile', () => {
  const [build, final] = [stages(dockerfile)[0], stages(dockerfile).at(-1)] as [Stage, Stage];

  it('builds with dev dependencies in one stage and runs with production dependencies in another', () => {
    expect(stages(dockerfile)).toHaveLength(2);
    expect(args(build, 'RUN').join('\n')).toMatch(/npm ci(?!.*--omit=dev)/);
    expect(args(build, 'RUN').join('\n')).toMatch(/npm run build/);
    expect(args(final, 'RUN').join('\n')).toMatch(/npm ci --omit=dev/);
    expect(args(final, 'COPY')).toContain(`--from=${build.name} /app/dist ./dist`);
    // the sandbox (drainer sandbox/demo) reads scenarios/ next to dist/
    expect(args(final, 'COPY')).toContain('scenarios ./scenarios');
  });

  it('pins the Node 24 base image by full version', () => {
    for (const s of stages(dockerfile))
      expect(s.from).toMatch(/^node:24\.\d+\.\d+-[a-z-]+$|@sha256:[0-9a-f]{64}$/);
  });

  it('runs as a numeric non-root user, `node dist/cli.js` as the entrypoint (no npm in the signal path)', () => {
    const user = args(final, 'USER').at(-1) ?? '';
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user.split(':')[0])).toBeGreaterThan(0);
    expect(JSON.parse(args(final, 'ENTRYPOINT').at(-1) ?? 'null')).toEqual(['node', 'dist/cli.js']);
    expect(args(final, 'CMD').join(' ')).not.toMatch(/npm/);
  });

  it('.dockerignore keeps local state and build output out of the context', () => {
    const ignored = readFileSync('.dockerignore', 'utf8')
      .split('\n')
      .map((l) => l.trim());
    for (const p of ['node_modules', 'dist', '.git', '.sandbox', 'config.yaml']) expect(ignored).toContain(p);
  });
});

describe('the build the image runs (npm run build)', () => {
  // Inside the project so the compiled files resolve node_modules as dist/ would.
  mkdirSync('node_modules/.cache', { recursive: true });
  const outDir = mkdtempSync(path.join('node_modules', '.cache', 'drainer-dist-'));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('emits dist/cli.js, the entrypoint, and it runs', { timeout: 120_000 }, async () => {
    const config = JSON.parse(readFileSync('tsconfig.build.json', 'utf8')) as {
      compilerOptions: { outDir: string; rootDir: string };
    };
    // dist/cli.js is src/cli.ts compiled: outDir dist, rootDir src
    expect(config.compilerOptions).toMatchObject({ outDir: 'dist', rootDir: 'src' });

    const tsc = path.join('node_modules', 'typescript', 'bin', 'tsc');
    await run(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', outDir]);
    const entry = path.join(outDir, 'cli.js');
    expect(existsSync(entry)).toBe(true);

    const help = await run(process.execPath, [entry, '--help'], { encoding: 'utf8' });
    expect(help.stdout).toMatch(/drainer daemon/);
    // a lazily loaded command resolves in the compiled tree too (.ts imports rewritten to .js)
    const cfg = await run(process.execPath, [entry, 'config', '--node', 'n1'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(cfg.stdout).toMatch(/nodeName: n1/);
  });
});
