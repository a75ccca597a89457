import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, type LoadOptions } from '../../src/config/load.ts';

/** A scratch world: cwd, home and /etc/openstack stand-ins, and an empty environment. */
export function world() {
  const root = mkdtempSync(path.join(tmpdir(), 'drainer-config-'));
  const dirs = {
    cwd: path.join(root, 'cwd'),
    homeDir: path.join(root, 'home'),
    etcDir: path.join(root, 'etc'),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  };
  return {
    ...dirs,
    root,
    write,
    userDir: path.join(dirs.homeDir, '.config', 'openstack'),
    load: (opts: Partial<LoadOptions> = {}) => loadConfig({ ...dirs, env: {}, ...opts }),
  };
}
