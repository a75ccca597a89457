import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { leaves } from '../../src/config/schema-walk.ts';
import { world } from './helpers.ts';

const example = readFileSync(new URL('../../config.yaml.example', import.meta.url), 'utf8');

/** The example with its optional keys ("# key: value" lines) switched on; "##" prose stays a comment. */
const withOptionalKeys = example.replace(/^(\s*)# ([A-Za-z]+:)/gm, '$1$2');

function keyPaths(doc: unknown, prefix: string[] = []): string[] {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return [prefix.join('.')];
  const entries = Object.entries(doc);
  if (entries.length === 0) return [prefix.join('.')];
  return entries.flatMap(([k, v]) => keyPaths(v, [...prefix, k]));
}

describe('config.yaml.example', () => {
  it('loads as is and gives exactly the defaults', async () => {
    const w = world();
    const file = path.join(w.cwd, 'example.yaml');
    writeFileSync(file, example);
    expect(await w.load({ configPath: file })).toEqual(configSchema.parse({}));
  });

  it('shows every schema key, and its optional examples load too', async () => {
    const w = world();
    const file = path.join(w.cwd, 'example.yaml');
    writeFileSync(file, withOptionalKeys);
    w.write(path.join(w.cwd, 'clouds.yaml'), 'clouds:\n  mycloud:\n    auth: {auth_url: "https://k/v3"}\n');
    await expect(w.load({ configPath: file })).resolves.toBeDefined();

    const shown = new Set(keyPaths(yaml.load(withOptionalKeys)));
    const missing = leaves()
      .map((l) => l.path.join('.'))
      .filter((p) => !shown.has(p));
    expect(missing).toEqual([]);
  });
});
