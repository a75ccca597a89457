// The one pino module. Redaction is by key name at any depth we log, so secrets in
// nested error objects (got's request options, headers) never reach a log line.
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

/** Keys whose values are never logged, wherever they appear. */
export const SECRET_KEYS = [
  'password',
  'secret',
  'applicationCredentialSecret',
  'application_credential_secret',
  'token',
  'x-auth-token',
  'X-Auth-Token',
  'x-subject-token',
  'X-Subject-Token',
  'authorization',
  'Authorization',
  'cookie',
  'Cookie',
  'key',
  'clientKey',
] as const;

function redactPaths(): string[] {
  const paths: string[] = [];
  for (const key of SECRET_KEYS) {
    const k = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`;
    const dot = k.startsWith('[') ? '' : '.';
    paths.push(key.includes('-') ? `["${key}"]` : key);
    // depth 1..4: enough for {err:{options:{headers:{...}}}}
    for (const prefix of ['*', '*.*', '*.*.*', '*.*.*.*']) paths.push(`${prefix}${dot}${k}`);
  }
  return paths;
}

export interface LoggerOptions {
  level?: string;
  /** Where lines go (tests pass a capturing stream). Default: stdout. */
  destination?: DestinationStream;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  return pino(
    {
      level: opts.level ?? 'info',
      base: { app: 'drainer' },
      redact: { paths: redactPaths(), censor: '[REDACTED]' },
      serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.destination,
  );
}
