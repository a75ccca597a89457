import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { defaultStateFile, FileRecordStore } from '../../src/cli/record-file.ts';

const dir = () => mkdtempSync(path.join(tmpdir(), 'drainer-state-'));

describe('FileRecordStore', () => {
  it('gives a later process the records an earlier one saved', async () => {
    const file = defaultStateFile(dir(), 'node-1');
    const first = await FileRecordStore.open(file);
    await first.save('nova', { host: 'compute-1', disabledByUs: true });

    const later = await FileRecordStore.open(file);

    expect(later.get('nova')).toEqual({ host: 'compute-1', disabledByUs: true });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      plugins: { nova: { host: 'compute-1', disabledByUs: true } },
    });
  });

  it('starts empty without a file and forgets everything on remove', async () => {
    const file = path.join(dir(), 'state.json');
    const store = await FileRecordStore.open(file);
    expect(store.get('nova')).toBeUndefined();
    await store.save('nova', { a: 1 });
    await store.remove();
    expect((await FileRecordStore.open(file)).get('nova')).toBeUndefined();
  });

  it('refuses a corrupt state file as bad input instead of guessing', async () => {
    const file = path.join(dir(), 'state.json');
    writeFileSync(file, '{not json');
    await expect(FileRecordStore.open(file)).rejects.toBeInstanceOf(ConfigError);
  });
});
