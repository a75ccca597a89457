// Identifiers and time formats as OpenStack prints them, and a seeded RNG for repeatable faults.
import { randomBytes, randomUUID } from 'node:crypto';

export { randomUUID as uuid };

/** Keystone's ids: 32 lowercase hex characters. */
export function hexId(): string {
  return randomBytes(16).toString('hex');
}

/** Fernet-looking opaque token (random; the sandbox keeps its own table). */
export function tokenString(): string {
  return `gAAAAA${randomBytes(96).toString('base64url')}`;
}

/** mulberry32: small, fast, good enough to pick which requests fail. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** "2026-11-22T03:25:45.000000" (Nova's database timestamps, no zone). */
export function novaTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000');
}

/** "2026-11-22T04:24:22.000000Z" (Keystone's expires_at / issued_at). */
export function keystoneTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** "2026-11-22T03:24:58Z" (server created/updated). */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
