import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { README_BEGIN, README_END, referenceMarkdown, referenceRows } from '../../src/config/reference.ts';
import { leaves } from '../../src/config/schema-walk.ts';

describe('configuration reference', () => {
  it('has a row with a description for every key of the schema', () => {
    const rows = referenceRows();
    expect(rows.map((r) => r.key)).toEqual(leaves().map((l) => l.path.join('.')));
    expect(rows.filter((r) => !r.description).map((r) => r.key)).toEqual([]);
  });

  it('shows defaults and env names the loader really uses', () => {
    const row = referenceRows().find((r) => r.key === 'nova.maxConcurrentMigrations');
    expect(row).toMatchObject({
      default: '1',
      env: 'DRAINER_NOVA_MAX_CONCURRENT_MIGRATIONS',
      type: 'integer',
    });
  });

  it('is what README.md shows (run `npm run docs:config` after changing the schema)', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const start = readme.indexOf(README_BEGIN);
    const end = readme.indexOf(README_END);
    expect(start).toBeGreaterThan(0);
    expect(readme.slice(start + README_BEGIN.length, end).trim()).toBe(referenceMarkdown());
  });
});
