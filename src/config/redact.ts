// The effective config with secrets blanked, for `drainer config` and for logging the config.
import { withoutUrlPasswords } from '../observability/redact.ts';
import { isSecretKey } from './schema-walk.ts';

export const REDACTED = '[REDACTED]';

/**
 * A deep copy in which every set value under a secret-named key reads "[REDACTED]", and a URL's
 * password (fleet.blockers.prometheus.url may carry one) too.
 */
export function redactConfig<T>(value: T): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return withoutUrlPasswords(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v).map(([k, inner]) => [
          k,
          isSecretKey(k) && inner !== undefined ? REDACTED : walk(inner),
        ]),
      );
    }
    return v;
  };
  return walk(value) as T;
}
