// Each server's way out, as its owner chose it in the server's metadata. Nova's metadata keys
// match ^[a-zA-Z0-9-_:. ]{1,255}$, so the key is drainer.dev:maintenance (a "/" is refused with 400).
import type { NovaServer } from './types.ts';

export const MAINTENANCE_KEY = 'drainer.dev:maintenance';
export const WAYS = ['live', 'cold', 'stop', 'notify'] as const;
export type Way = (typeof WAYS)[number];

export type Chosen =
  { readonly way: Way; readonly why: string } | { readonly invalid: string; readonly why: string };

const isWay = (v: string): v is Way => (WAYS as readonly string[]).includes(v);

/** The server's way out and why: its metadata, else the default (live). */
export function chosenWay(s: NovaServer): Chosen {
  const raw = s.metadata?.[MAINTENANCE_KEY];
  if (raw === undefined) return { way: 'live', why: 'default' };
  const why = `metadata ${MAINTENANCE_KEY}=${raw}`;
  if (isWay(raw)) return { way: raw, why };
  return {
    invalid: `metadata ${MAINTENANCE_KEY}=${JSON.stringify(raw)} is not one of ${WAYS.join(', ')}`,
    why,
  };
}

/** The servers whose metadata names no way drainer knows, one line each (server name and id). */
export function invalidPolicies(servers: readonly NovaServer[]): string[] {
  return servers.flatMap((s) => {
    const c = chosenWay(s);
    return 'invalid' in c ? [`${s.name} (${s.id}): ${c.invalid}`] : [];
  });
}
