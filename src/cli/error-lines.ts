// What a person sees when a command fails: one line per problem, never a stack, unless they asked
// for one with --log-level debug. Drainer's own errors say what is wrong and are printed as they are;
// anything else is unexpected and gets its cause and a hint on what to do next.
import { isConfigError, isDrainerError } from '../errors.ts';

const DEBUG_LEVELS = new Set(['debug', 'trace']);

export const wantsStack = (logLevel: string | undefined): boolean =>
  logLevel !== undefined && DEBUG_LEVELS.has(logLevel);

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The innermost cause's message, when the error has one that says something new. */
function rootCause(e: unknown): string | undefined {
  let cause: unknown = e instanceof Error ? e.cause : undefined;
  let text: string | undefined;
  for (let depth = 0; cause !== undefined && depth < 10; depth++) {
    text = messageOf(cause);
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return text && text !== messageOf(e) ? text : undefined;
}

export function errorLines(e: unknown, opts: { stack: boolean }): string[] {
  if (isConfigError(e)) return e.issues.map((i) => `error: ${i.path ? `${i.path}: ` : ''}${i.message}`);
  // drainer's own errors say the cause in their words already; the system's (an OpenSSL line
  // with its file path) is for --log-level debug. Anything else gets its cause's first line.
  const cause = isDrainerError(e) && !opts.stack ? undefined : rootCause(e)?.split('\n')[0]?.trim();
  const lines = [`error: ${messageOf(e)}${cause ? ` (cause: ${cause})` : ''}`];
  if (opts.stack && e instanceof Error && e.stack) lines.push(e.stack);
  else if (!isDrainerError(e))
    lines.push('hint: an unexpected error; run again with --log-level debug for the stack, and report it');
  return lines;
}
