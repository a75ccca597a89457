// The contract test's comparator (no cloud needed): what counts as "the same shape".
import { describe, expect, it } from 'vitest';
import { shapeDiff, shapeOf } from './support/shape.ts';

describe('response shape comparison', () => {
  it('reports fields missing in the emulation and fields the real API does not have', () => {
    const real = shapeOf({ server: { id: 'a', status: 'ACTIVE', 'OS-EXT-SRV-ATTR:host': 'h' } });
    const emulated = shapeOf({ server: { id: 'b', status: 'ACTIVE', host: 'h' } });

    expect(shapeDiff(real, emulated)).toEqual([
      '$.server.OS-EXT-SRV-ATTR:host: missing in the emulation',
      '$.server.host: not in the real API',
    ]);
  });

  it('lets null stand for any type (nullable fields) but not a string for a number', () => {
    const real = shapeOf({ service: { id: 7, disabled_reason: null } });

    expect(shapeDiff(real, shapeOf({ service: { id: 8, disabled_reason: 'drainer: x' } }))).toEqual([]);
    expect(shapeDiff(real, shapeOf({ service: { id: '8', disabled_reason: null } }))).toEqual([
      '$.service.id: number vs string',
    ]);
  });

  it('compares arrays by the union of their elements and lets an empty array match any', () => {
    const real = shapeOf({ migrations: [{ id: 1 }, { id: 2, links: [] }] });

    expect(shapeDiff(real, shapeOf({ migrations: [{ id: 3 }] }))).toEqual([
      '$.migrations[].links: missing in the emulation',
    ]);
    expect(shapeDiff(real, shapeOf({ migrations: [] }))).toEqual([]);
  });
});
