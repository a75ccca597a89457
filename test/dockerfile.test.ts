// The image: a build stage with dev dependencies bundles src/ into dist/ (esbuild), a second stage gathers
// production dependencies and node with its libraries, and a final stage from scratch (no npm, no shell) starts
// `node dist/cli.js` as a numeric non-root user. No Docker engine
// runs here, so check the Dockerfile's shape and that the build it runs yields a working dist/cli.js
// whose daemon loads no sandbox, demo or bench code, no client-node, yargs, zod or undici.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle } from '../scripts/build.ts';
import { configSchema } from '../src/config/schema.ts';

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
  const all = stages(dockerfile);
  const [build, runtime, final] = [all[0], all[1], all.at(-1)] as [Stage, Stage, Stage];

  it('builds with dev dependencies, gathers production dependencies in another stage, and runs from neither', () => {
    expect(all).toHaveLength(3);
    expect(args(build, 'RUN').join('\n')).toMatch(/npm ci(?!.*--omit=dev)/);
    expect(args(build, 'RUN').join('\n')).toMatch(/npm run build/);
    expect(args(runtime, 'RUN').join('\n')).toMatch(/npm ci --omit=dev/);
    expect(args(final, 'COPY')).toContain(`--from=${build.name} /app/dist ./dist`);
    expect(args(final, 'COPY')).toContain(`--from=${runtime.name} /app/node_modules ./node_modules`);
    // the sandbox (drainer sandbox/demo) reads scenarios/ next to dist/
    expect(args(final, 'COPY')).toContain('scenarios ./scenarios');
  });

  it('runs on nothing but node and the libraries it links: no npm, no shell, no RUN in the final stage', () => {
    expect(final.from).toBe('scratch');
    expect(args(final, 'RUN')).toEqual([]);
    expect(args(final, 'COPY')).toContain(`--from=${runtime.name} /rootfs /`);
    const gather = args(runtime, 'RUN').join('\n');
    expect(gather).toMatch(/cp \/usr\/local\/bin\/node \/rootfs\/usr\/local\/bin\/node/);
    expect(gather).toMatch(/ldd \/usr\/local\/bin\/node/);
    expect(args(final, 'ENV')).toContain('PATH=/usr/local/bin');
  });

  it('carries systemd-inhibit and the libraries it links where shutdown.inhibitCommand names it, and no systemd package', () => {
    const gather = args(runtime, 'RUN').join('\n');
    expect(configSchema.parse({}).shutdown.inhibitCommand).toEqual(['/usr/bin/systemd-inhibit']);
    expect(gather).toMatch(/cp \/usr\/bin\/systemd-inhibit \/rootfs\/usr\/bin\//);
    expect(gather).toMatch(/ldd \/usr\/bin\/systemd-inhibit/);
    // the libraries' cache is copied after the package brought them
    expect(gather.indexOf('systemd-inhibit')).toBeLessThan(gather.indexOf('/etc/ld.so.cache'));
  });

  it('pins the Node 24 base image by full version', () => {
    for (const s of all.filter((x) => x !== final))
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

/** The outputs `entry` loads before its code runs: itself and every chunk it imports statically. */
function staticClosure(meta: Metafile, entry: string): string[] {
  const seen = new Set<string>();
  const visit = (out: string) => {
    if (seen.has(out)) return;
    seen.add(out);
    for (const i of meta.outputs[out]?.imports ?? [])
      if (i.kind === 'import-statement' && !i.external) visit(i.path);
  };
  visit(entry);
  return [...seen];
}

describe('the build the image runs (npm run build)', () => {
  // Inside the project so the bundle resolves node_modules as dist/ would.
  mkdirSync('node_modules/.cache', { recursive: true });
  const outDir = mkdtempSync(path.join('node_modules', '.cache', 'drainer-dist-'));
  let meta: Metafile;
  beforeAll(async () => {
    meta = await buildBundle(path.resolve(outDir));
  }, 120_000);
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  const outputFor = (input: string) => {
    const found = Object.entries(meta.outputs).find(([, o]) => o.entryPoint === input);
    if (!found) throw new Error(`no output for ${input}`);
    return found[0];
  };

  it('is what npm run build makes', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.build).toBe('node scripts/build.ts');
  });

  it('emits dist/cli.js, the entrypoint, and it runs', { timeout: 60_000 }, async () => {
    const entry = path.join(outDir, 'cli.js');
    expect(existsSync(entry)).toBe(true);
    const help = await run(process.execPath, [entry, '--help'], { encoding: 'utf8' });
    expect(help.stdout).toMatch(/drainer daemon/);
    // a lazily loaded command resolves as a split chunk
    const cfg = await run(process.execPath, [entry, 'config', '--node', 'n1'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(cfg.stdout).toMatch(/nodeName: n1/);
  });

  it('`drainer daemon` starts without loading undici (fetch) into Node', { timeout: 60_000 }, async () => {
    // node:http imported as an ES module, or the Headers global read, would load it (~6 MB RSS)
    const probe = `process.on('exit', () => process.stderr.write('BUILTINS ' + process.moduleLoadList.join(',') + '\\n'));`;
    const importProbe = `data:text/javascript,${encodeURIComponent(probe)}`;
    const entry = path.join(outDir, 'cli.js');
    const failed = (await run(process.execPath, ['--import', importProbe, entry, 'daemon'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    }).catch((e: unknown) => e)) as { code?: number; stderr: string };
    // it loaded everything the agent starts with, then stopped at the missing NODE_NAME
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/NODE_NAME is required/);
    const builtins = /^BUILTINS (.*)$/m.exec(failed.stderr)?.[1] ?? '';
    expect(builtins).toMatch(/NativeModule https\b/);
    expect(builtins).not.toMatch(/undici/);
  });

  it('splits the lazily loaded commands into chunks of their own', () => {
    for (const cmd of ['daemon', 'sandbox', 'demo', 'run-once', 'status'])
      expect(outputFor(`src/cli/${cmd}.ts`)).not.toBe(outputFor('src/cli.ts'));
  });

  it('`drainer daemon` statically loads no sandbox, demo or bench code and no client-node', () => {
    const loaded = [
      ...staticClosure(meta, outputFor('src/cli.ts')),
      ...staticClosure(meta, outputFor('src/cli/daemon.ts')),
    ];
    const inputs = loaded.flatMap((o) => Object.keys(meta.outputs[o]?.inputs ?? {}));
    const packages = loaded.flatMap((o) =>
      (meta.outputs[o]?.imports ?? []).filter((i) => i.external).map((i) => i.path),
    );
    expect(inputs).toContain('src/kube/wire-pod.ts');
    expect(inputs).toContain('src/plugins/registry.ts');
    expect(inputs.filter((i) => /^(src\/(sandbox|demo)|bench)\//.test(i))).toEqual([]);
    expect(inputs).not.toContain('src/kube/client.ts');
    expect(packages.filter((p) => p.startsWith('@kubernetes/'))).toEqual([]);
    // a plain `drainer daemon` is parsed without yargs; the config schema's zod/mini is bundled
    expect(packages.filter((p) => p === 'yargs' || p.startsWith('zod'))).toEqual([]);
    expect(inputs.some((i) => i.includes('node_modules/zod/v4/mini/'))).toBe(true);
    // the kubeconfig path still reaches client-node, through a dynamic import
    const kubeconfig = staticClosure(meta, outputFor('src/kube/client.ts'));
    expect(kubeconfig.flatMap((o) => meta.outputs[o]?.imports.map((i) => i.path) ?? [])).toContain(
      '@kubernetes/client-node',
    );
  });
});
