// Runs the system's kubectl asynchronously (the API servers the tests talk to run in this process).
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';

export const hasKubectl = existsSync('/usr/bin/kubectl');

export async function kubectl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)('kubectl', args, { encoding: 'utf8' });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

/**
 * `kubectl kustomize <dir>` of a scratch copy of daemonset/ and docs/examples/, with `files` (paths from
 * the repository's root → text) written over it first. Fails the calling test if kustomize refuses.
 */
export async function renderCopy(dir: string, files: Record<string, string> = {}): Promise<unknown[]> {
  const root = mkdtempSync(path.join(tmpdir(), 'drainer-kustomize-copy-'));
  for (const d of ['daemonset', 'docs/examples']) cpSync(d, path.join(root, d), { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(path.join(root, f), text);
  const out = await kubectl(['kustomize', path.join(root, dir)]);
  if (out.code !== 0) throw new Error(`kubectl kustomize ${dir}: ${out.stderr}`);
  return yaml.loadAll(out.stdout);
}
