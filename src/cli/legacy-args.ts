/** Placeholder: maps the old Go tool's flags (-daemon, --daemon, -config-path=F, -time-out=M) onto ours. */
export function normalizeLegacyArgs(argv: readonly string[]): string[] {
  return [...argv];
}
