// The state directory, made like `mkdir -p` but one level at a time: Node's recursive mkdir spins
// forever on a path it cannot make under /proc (100 % CPU, deaf to SIGTERM). A path under a file,
// or one that cannot be made, is one line naming --state-dir.
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigError } from '../errors.ts';

const refused = (message: string): ConfigError => new ConfigError([{ path: '--state-dir', message }]);

/** Makes `dir` and its missing parents; throws the one line when it cannot. */
export async function makeStateDir(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let p = dir; ; p = dirname(p)) {
    const s = await stat(p).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      if (err.code === 'ENOTDIR') return 'under a file' as const;
      throw refused(`${dir} cannot be used (${err.code ?? 'error'} on ${p})`);
    });
    if (s === 'under a file') continue; // a parent is a file: found further up
    if (s === undefined) {
      if (dirname(p) === p) throw refused(`${dir} cannot be made`);
      missing.unshift(p);
      continue;
    }
    if (!s.isDirectory()) throw refused(`${dir} cannot be made: ${p} is a file, not a directory`);
    break;
  }
  for (const p of missing)
    await mkdir(p).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw refused(`${dir} cannot be made (${err.code ?? 'error'} on ${p})`);
    });
}
