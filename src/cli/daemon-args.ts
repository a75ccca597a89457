// `drainer daemon` as the DaemonSet starts it, parsed without yargs: loading yargs cost the agent
// ~4 MB RSS and ~50 ms at start under --jitless (bench footprint). Only plain forms are taken: the
// command first, then global flags (global-flags.ts), each once, `--flag value` or `--flag=value`, with
// a valid value. Anything else (--help, an unknown or repeated flag, a bad --log-level, a missing
// value) gives undefined and goes to yargs, so its help and errors stay exactly what they were.
import { GLOBAL_FLAGS, type GlobalFlags } from './global-flags.ts';

const FLAG = /^--([a-z][a-z-]*)(?:=(.*))?$/s;

/** The flags of a plain `daemon …` invocation (argv after normalizeLegacyArgs), or undefined. */
export function plainDaemonArgs(argv: readonly string[]): GlobalFlags | undefined {
  if (argv[0] !== 'daemon') return undefined;
  const out: Partial<Record<keyof GlobalFlags, string | boolean>> = {};
  for (let i = 1; i < argv.length; i++) {
    const m = FLAG.exec(argv[i] ?? '');
    const flag = m?.[1] && Object.hasOwn(GLOBAL_FLAGS, m[1]) ? GLOBAL_FLAGS[m[1]] : undefined;
    if (!m || !flag || out[flag.key] !== undefined) return undefined;
    if (flag.type === 'boolean') {
      if (m[2] !== undefined) return undefined; // --dry-run=false and the like: yargs' rules
      out[flag.key] = true;
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (!value || value.startsWith('-')) return undefined;
    if (flag.choices && !flag.choices.includes(value)) return undefined;
    out[flag.key] = value;
  }
  return out as GlobalFlags;
}
