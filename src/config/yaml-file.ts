// Reads a YAML (or JSON) file; syntax errors become a ConfigError naming the file and line.
import { readFile } from 'node:fs/promises';
import yaml from 'js-yaml';
import { ConfigError } from '../errors.ts';

/** The parsed document, or undefined when the file does not exist. */
export async function readYamlFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    throw new ConfigError([{ path: file, message: `cannot read the file (${code})` }], { cause: e });
  }
  return parseYaml(text, file);
}

/** A YAML text read from `source` (a file, a ConfigMap's key); syntax errors name the source and line. */
export function parseYaml(text: string, source: string): unknown {
  try {
    return yaml.load(text, { filename: source });
  } catch (e) {
    // js-yaml's reason + position; its message would quote the offending line, which may hold a secret.
    const err = e as { reason?: string; mark?: { line: number; column: number } };
    const where = err.mark ? ` at line ${err.mark.line + 1}, column ${err.mark.column + 1}` : '';
    throw new ConfigError([{ path: source, message: `YAML syntax error${where}: ${reasonOf(err, text)}` }]);
  }
}

/** js-yaml's reason; a duplicated key is named (a key's name, never its value, which may be a secret). */
function reasonOf(err: { reason?: string; mark?: { line: number } }, text: string): string {
  const reason = err.reason ?? 'invalid';
  if (reason !== 'duplicated mapping key' || !err.mark) return reason;
  const key = /^\s*(?:-\s+)?["']?([^"':#]+?)["']?\s*:/.exec(text.split('\n')[err.mark.line] ?? '')?.[1];
  return key ? `the key "${key}" appears twice in one mapping` : reason;
}
