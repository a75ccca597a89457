// What loading a module costs by itself, in a fresh Node process: wall time of the import and the
// process's RSS and heap afterwards. Explains start-up time and resident memory of the daemon.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export interface ImportCost {
  readonly module: string;
  readonly ms: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
}

const run = promisify(execFile);

const PROBE = `
const t = performance.now();
const spec = process.argv[1];
if (spec) await import(spec);
const ms = performance.now() - t;
const m = process.memoryUsage();
console.log(JSON.stringify({ ms, rssBytes: m.rss, heapUsedBytes: m.heapUsed }));
`;

/**
 * Cost of importing `spec` (a package name or a path relative to cwd); '' for a bare process. With
 * `nodeOptions`, under those NODE_OPTIONS (--jitless compiles Node's own modules at run time too).
 */
export async function importCost(cwd: string, spec: string, nodeOptions = ''): Promise<ImportCost> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', PROBE, spec], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) },
  });
  const r = JSON.parse(stdout) as Omit<ImportCost, 'module'>;
  return { module: spec || '(nothing)', ...r };
}
