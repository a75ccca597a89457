// The one pino module. Every logged object and child binding is deep-redacted (src/observability/redact.ts):
// secret-named keys at any depth, got errors reduced to safe facts (no request options, no headers),
// private keys. Messages themselves are the caller's responsibility: never interpolate a secret.
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { CENSOR, redactDeep, SECRET_KEYS } from './redact.ts';
import { safeError, scrubUrls } from './safe-error.ts';
import { isExpectedFailure } from '../errors.ts';

export type Logger = PinoLogger;
export { SECRET_KEYS };

export interface LoggerOptions {
  level?: string;
  /** Where lines go (tests pass a capturing stream). Default: stdout. */
  destination?: DestinationStream;
}

const errSerializer = (e: unknown): unknown => (e instanceof Error ? redactDeep(safeError(e)) : e);

const DEBUG_LEVELS = new Set(['debug', 'trace']);

/**
 * An expected failure (isExpectedFailure: no answer, refused credentials …) is logged without its
 * stack unless at debug: its message says it all. (The log formatter turns errors into SafeErrors
 * before pino's serializers run, so this happens there.)
 */
function withoutExpectedStacks(obj: Record<string, unknown>, level: string): Record<string, unknown> {
  if (DEBUG_LEVELS.has(level)) return obj;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v instanceof Error && isExpectedFailure(v)) {
      const { stack: _stack, ...safe } = safeError(v);
      out[k] = safe;
    } else out[k] = v;
  }
  return out;
}

/**
 * pino writes a key once per binding and once per line that names it again: `node` came out twice
 * (the agent's child, the reconciler's child). A key already bound to the same value is dropped.
 */
function unbound(fields: Record<string, unknown>, bound: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([k, v]) => !(k in bound) || bound[k] !== v));
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Error);

/**
 * pino runs the bindings formatter only for the root logger, so children redact their bindings here.
 * pino's own child() is kept and called on each logger: a child inherits its parent's properties,
 * so one bound to the parent would make every grandchild a child of the root (losing what the
 * middle bound: the agent's instance, the node).
 */
type PinoChild = (this: Logger, bindings: Record<string, unknown>, options?: object) => Logger;

function redactChildBindings(
  log: Logger,
  pinoChild = Reflect.get(log, 'child') as unknown as PinoChild,
): Logger {
  const child = (bindings: Record<string, unknown>, options?: object) =>
    redactChildBindings(
      pinoChild.call(log, redactDeep(unbound(bindings, log.bindings())), options),
      pinoChild,
    );
  Object.defineProperty(log, 'child', { value: child, configurable: true, writable: true });
  return log;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const log = pino(
    {
      level: opts.level ?? 'info',
      base: { app: 'drainer' },
      formatters: {
        log: (obj) => redactDeep(withoutExpectedStacks(obj, opts.level ?? 'info')),
        bindings: (bindings) => redactDeep(bindings),
      },
      // A second net for the common top-level places, in case a formatter is ever bypassed.
      redact: {
        paths: ['password', 'token', 'headers["x-auth-token"]', 'headers["x-subject-token"]'],
        censor: CENSOR,
      },
      serializers: { err: errSerializer, error: errSerializer },
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: {
        // pino uses an error's message as the line's msg; got's messages carry the full URL.
        logMethod(args, method) {
          const bound = this.bindings();
          const scrubbed = args.map((a: unknown, i) =>
            typeof a === 'string' ? scrubUrls(a) : i === 0 && isPlainObject(a) ? unbound(a, bound) : a,
          );
          const [first, ...rest] = scrubbed;
          if (first instanceof Error && typeof rest[0] !== 'string') {
            method.apply(this, [{ err: first }, scrubUrls(first.message)] as Parameters<typeof method>);
            return;
          }
          method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
    },
    opts.destination,
  );
  return redactChildBindings(log);
}

/** A logger that writes nothing (tests, library use). */
export const silentLogger = (): Logger => createLogger({ level: 'silent' });
