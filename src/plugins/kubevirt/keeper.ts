// The plugin's record and how to persist it (saved BEFORE the change it describes).
import type { PluginRecord } from '../../core/backends/plugin.ts';
import { toPluginRecord, type KubevirtRecord } from './record.ts';

export interface RecordKeeper {
  readonly current: KubevirtRecord;
  save(next: KubevirtRecord): Promise<void>;
}

export function keeper(initial: KubevirtRecord, save: (r: PluginRecord) => Promise<void>): RecordKeeper {
  const k = {
    current: initial,
    async save(next: KubevirtRecord) {
      k.current = next;
      await save(toPluginRecord(next));
    },
  };
  return k;
}
