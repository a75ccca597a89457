import { describe, expect, it } from 'vitest';
import { longestChain } from '../../bench/lib/request-chain.ts';

const r = (start: number, end: number) => ({ start, end });

describe('longest chain of requests waited for', () => {
  it.each([
    ['nothing', [], 0],
    ['one request', [r(0, 5)], 1],
    ['three one after another', [r(0, 1), r(2, 3), r(4, 5)], 3],
    ['three side by side', [r(0, 5), r(0.1, 4), r(0.2, 6)], 1],
    // reads side by side, then a write after them, then two more in a row: 3
    ['side by side, then in a row', [r(0, 2), r(0, 3), r(3.5, 4), r(5, 6)], 3],
    // a long request beside a chain of two: the chain sets the length
    ['a long one beside a chain', [r(0, 10), r(0, 1), r(2, 3)], 2],
    ['given out of order', [r(4, 5), r(0, 1), r(2, 3)], 3],
  ])('%s', (_name, requests, expected) => {
    expect(longestChain(requests)).toBe(expected);
  });
});
