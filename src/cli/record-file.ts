// The plugin records of run-once, kept in a small JSON file so that a later `drainer restore`
// (another process) undoes exactly what run-once changed — the role the Node annotation plays
// for the daemon. Writes go to a temporary file and are renamed over, so a crash never leaves half a file.
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors.ts';
import { MemoryRecordStore } from '../core/backends/host.ts';
import type { PluginRecord } from '../core/backends/plugin.ts';

export const defaultStateFile = (cwd: string, node: string): string =>
  path.resolve(cwd, '.drainer-state', `${node.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);

export class FileRecordStore extends MemoryRecordStore {
  readonly file: string;
  #chain: Promise<void> = Promise.resolve();

  private constructor(file: string, initial: Record<string, PluginRecord>) {
    super(initial);
    this.file = file;
  }

  static async open(file: string): Promise<FileRecordStore> {
    let text: string | undefined;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    let plugins: Record<string, PluginRecord> = {};
    if (text !== undefined) {
      try {
        plugins = (JSON.parse(text) as { plugins?: Record<string, PluginRecord> }).plugins ?? {};
      } catch {
        throw new ConfigError([
          { path: file, message: 'the state file is not valid JSON; remove it or pass --state-file' },
        ]);
      }
    }
    return new FileRecordStore(file, plugins);
  }

  override async save(plugin: string, record: PluginRecord): Promise<void> {
    await super.save(plugin, record);
    const body = `${JSON.stringify({ plugins: this.toJSON() }, null, 2)}\n`;
    const write = this.#chain.then(async () => {
      await mkdir(path.dirname(this.file), { recursive: true });
      const tmp = `${this.file}.${process.pid}.tmp`;
      await writeFile(tmp, body, { mode: 0o600 });
      await rename(tmp, this.file);
    });
    this.#chain = write.catch(() => undefined);
    await write;
  }

  /** Forget the state (after a complete restore). */
  async remove(): Promise<void> {
    await this.#chain;
    await rm(this.file, { force: true });
  }
}
