import { describe, expect, it } from 'vitest';
import { NotFoundError, TransientError } from '../../src/errors.ts';
import { retryTransient } from '../../src/core/agent/retry.ts';

const details = { api: 'kubernetes' };

describe('retryTransient', () => {
  it('gets a write through a short outage', async () => {
    let calls = 0;
    const result = await retryTransient(
      async () => {
        if (++calls < 3) throw new TransientError('503', details);
        return 'written';
      },
      { signal: new AbortController().signal, initialMs: 1 },
    );
    expect(result).toBe('written');
    expect(calls).toBe(3);
  });

  it('does not retry errors that will not heal', async () => {
    let calls = 0;
    const failing = retryTransient(
      async () => {
        calls++;
        throw new NotFoundError('gone', details);
      },
      { signal: new AbortController().signal, initialMs: 1 },
    );
    await expect(failing).rejects.toBeInstanceOf(NotFoundError);
    expect(calls).toBe(1);
  });

  it('gives up when its budget is spent', async () => {
    const failing = retryTransient(
      async () => {
        throw new TransientError('503', details);
      },
      { signal: new AbortController().signal, initialMs: 1, budgetMs: 10 },
    );
    await expect(failing).rejects.toBeInstanceOf(TransientError);
  });
});
