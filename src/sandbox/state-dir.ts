// One sandbox per state directory: a second `drainer sandbox` or `drainer demo` would rewrite the
// running one's kubeconfig and config.yaml, and its kubectl and agents would then point at a dead
// port. The directory's owner file (sandbox.pid: pid and API address) is taken with an exclusive
// create; one whose process still lives is refused, one left by a dead process is taken over.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.ts';
import { makeStateDir } from './make-dir.ts';

export const OWNER_FILE = 'sandbox.pid';

interface Owner {
  readonly pid: number;
  readonly kube?: string;
}

function readOwner(file: string): Owner | undefined {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as Partial<Owner>;
    return typeof v.pid === 'number' ? { pid: v.pid, ...(v.kube ? { kube: v.kube } : {}) } : undefined;
  } catch {
    return undefined;
  }
}

/** Is the process alive (signal 0 checks without sending)? EPERM: it lives, as another user's. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}

/** The live sandbox that owns the directory, if any (not this process). */
export function liveOwner(dir: string): Owner | undefined {
  const owner = readOwner(join(dir, OWNER_FILE));
  return owner && owner.pid !== process.pid && alive(owner.pid) ? owner : undefined;
}

/** Throws the one line a person reads when the directory belongs to a running sandbox. */
export function refuseLive(dir: string, shown = dir): void {
  const owner = liveOwner(dir);
  if (!owner) return;
  const api = owner.kube ? `, Kubernetes API ${owner.kube}` : '';
  throw new ConfigError([
    {
      path: '--state-dir',
      message: `a sandbox is running in ${shown} (pid ${owner.pid}${api}); its kubeconfig and config.yaml stay as they are: stop it, or pass another --state-dir`,
    },
  ]);
}

export interface StateDirClaim {
  /** Records the API address once the sandbox listens. */
  describe(kube: string): void;
  /** Gives the directory back (only while this process still owns it). */
  release(): void;
}

export async function claimStateDir(dir: string): Promise<StateDirClaim> {
  await makeStateDir(dir);
  const file = join(dir, OWNER_FILE);
  const write = (o: Owner, flag: 'wx' | 'w') => writeFileSync(file, `${JSON.stringify(o)}\n`, { flag });
  try {
    write({ pid: process.pid }, 'wx');
  } catch (err) {
    if ((err as { code?: string }).code !== 'EEXIST') throw err;
    refuseLive(dir);
    write({ pid: process.pid }, 'w'); // left by a sandbox that is gone
  }
  const mine = () => readOwner(file)?.pid === process.pid;
  return {
    describe: (kube) => {
      if (mine()) write({ pid: process.pid, kube }, 'w');
    },
    release: () => {
      if (mine()) rmSync(file, { force: true });
    },
  };
}
