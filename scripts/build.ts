// `npm run build`: bundles the CLI into dist/ with esbuild, what the image and the npm bin run. One
// entry (dist/cli.js); each lazily imported command, the plugins' registry and the kubeconfig client
// become split chunks, so `drainer daemon` loads no sandbox, demo or bench code, no TypeScript is
// stripped at start, and dependencies stay in node_modules (external) — except zod/mini, bundled:
// tree-shaken to what the config schema uses it is one small module, where loading zod's ~100 files
// from node_modules cost the daemon ~40 ms at start (bench footprint).
// Usage: node scripts/build.ts [outdir]
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** Bare imports bundled into dist/ (src/config/zod.ts); every other package stays external. */
const BUNDLED = new Set(['zod/mini', 'zod/v4/locales/en.js']);

const externalPackages: Plugin = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      BUNDLED.has(args.path) ? undefined : { path: args.path, external: true },
    );
  },
};

/** Bundles src/cli.ts into `outdir` (emptied first); returns esbuild's metafile (inputs, chunks, imports). */
export async function buildBundle(outdir = path.join(root, 'dist')): Promise<Metafile> {
  await rm(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { cli: 'src/cli.ts' },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    plugins: [externalPackages],
    chunkNames: 'chunks/[name]-[hash]',
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  return result.metafile;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2] ? path.resolve(process.argv[2]) : undefined;
  const meta = await buildBundle(outdir);
  const bytes = Object.values(meta.outputs).reduce((n, o) => n + o.bytes, 0);
  const files = Object.keys(meta.outputs).filter((f) => f.endsWith('.js')).length;
  process.stdout.write(`built ${files} files, ${Math.round(bytes / 1024)} KiB (with source maps)\n`);
}
