// Maps the old Go tool's flags (nova-kubernetes-drain) onto ours, before yargs sees them.
// Go's flag package accepts one or two dashes and `-flag value` or `-flag=value`:
//   -daemon / --daemon / -daemon=true   → the `daemon` command (=false: dropped)
//   -config-path FILE / -config-path=F  → --config-path F
//   -time-out MINUTES / -time-out=M     → --evacuation-timeout <M>m (the old value was minutes)
// Everything after a bare `--` is left alone.
import { UsageError } from './usage-error.ts';

const GO_BOOL_TRUE = new Set(['', 'true', '1', 't', 'T', 'TRUE', 'True']);

function splitFlag(arg: string): { name: string; value: string | undefined } | undefined {
  const m = /^--?([a-z][a-z-]*)(?:=(.*))?$/s.exec(arg);
  return m?.[1] ? { name: m[1], value: m[2] } : undefined;
}

export function normalizeLegacyArgs(argv: readonly string[]): string[] {
  const out: string[] = [];
  let daemon = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const flag = splitFlag(arg);
    if (flag?.name === 'daemon') {
      daemon ||= GO_BOOL_TRUE.has(flag.value ?? '');
      continue;
    }
    if (flag?.name === 'config-path' || flag?.name === 'time-out') {
      const value = flag.value ?? argv[++i];
      if (value === undefined) {
        out.push(arg); // let yargs report the missing value
        continue;
      }
      // the old flag takes minutes only: a bad value is reported against the flag the user typed
      if (flag.name === 'time-out' && !/^\d+(\.\d+)?$/.test(value))
        throw new UsageError(`${arg.split('=')[0]}: expected a number of minutes, got "${value}"`);
      out.push(flag.name === 'config-path' ? '--config-path' : '--evacuation-timeout');
      out.push(flag.name === 'time-out' ? `${value}m` : value);
      continue;
    }
    out.push(arg);
  }
  return daemon && out[0] !== 'daemon' ? ['daemon', ...out] : out;
}
