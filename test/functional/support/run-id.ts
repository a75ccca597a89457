import { randomBytes } from 'node:crypto';

/** Unique per suite run, so names never collide with a previous (or a concurrent) run's leftovers. */
export const RUN_ID = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;

export const uniqueName = (label: string): string => `drainer-ft-${RUN_ID}-${label}`;
