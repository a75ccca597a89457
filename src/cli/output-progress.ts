// Progress of run-once. On a terminal: one line per workload, redrawn in place (state, source →
// target, seconds). Elsewhere: a JSON log line whenever a workload changes state.
import type { WorkloadProgress } from '../core/backends/plugin.ts';
import type { Logger } from '../observability/logger.ts';
import type { OutStream } from './context.ts';

export interface ProgressSink {
  update(plugin: string, items: readonly WorkloadProgress[]): void;
  finish(): void;
}

const key = (plugin: string, id: string) => `${plugin}/${id}`;

function seconds(item: WorkloadProgress, now: number): string {
  if (item.durationMs !== undefined) return `${Math.round(item.durationMs / 1000)}s`;
  if (item.startedAt && item.state === 'migrating') {
    return `${Math.max(0, Math.round((now - Date.parse(item.startedAt)) / 1000))}s`;
  }
  return '';
}

export function progressLine(plugin: string, item: WorkloadProgress, now: number): string {
  const route = item.source || item.target ? `${item.source ?? '?'} → ${item.target ?? '…'}` : '';
  const why = item.state === 'failed' || item.state === 'blocked' ? (item.message ?? '') : '';
  return [plugin, item.name, item.state, route, seconds(item, now), why].filter(Boolean).join('  ');
}

/** Redraws its block of lines in place with ANSI cursor moves. */
export class TerminalProgress implements ProgressSink {
  readonly #out: OutStream;
  readonly #now: () => number;
  readonly #items = new Map<string, { plugin: string; item: WorkloadProgress }>();
  #drawn = 0;
  readonly #timer: NodeJS.Timeout;

  constructor(out: OutStream, now: () => number = Date.now, tickMs = 1000) {
    this.#out = out;
    this.#now = now;
    this.#timer = setInterval(() => this.#draw(), tickMs);
    this.#timer.unref();
  }

  update(plugin: string, items: readonly WorkloadProgress[]): void {
    for (const item of items) this.#items.set(key(plugin, item.id), { plugin, item });
    this.#draw();
  }

  finish(): void {
    clearInterval(this.#timer);
    this.#draw();
  }

  #draw(): void {
    const width = this.#out.columns ?? 120;
    const lines = [...this.#items.values()].map(({ plugin, item }) =>
      progressLine(plugin, item, this.#now()).slice(0, Math.max(20, width - 1)),
    );
    let text = this.#drawn > 0 ? `\x1b[${this.#drawn}F` : '';
    for (const l of lines) text += `\x1b[2K${l}\n`;
    this.#drawn = lines.length;
    if (text) this.#out.write(text);
  }
}

/** Logs each workload when its state changes (not on every report). */
export class LogProgress implements ProgressSink {
  readonly #log: Logger;
  readonly #states = new Map<string, string>();

  constructor(log: Logger) {
    this.#log = log;
  }

  update(plugin: string, items: readonly WorkloadProgress[]): void {
    for (const item of items) {
      const k = key(plugin, item.id);
      if (this.#states.get(k) === item.state) continue;
      this.#states.set(k, item.state);
      this.#log.info(
        {
          plugin,
          workload: item.id,
          name: item.name,
          state: item.state,
          action: item.action,
          source: item.source,
          target: item.target,
          attempts: item.attempts,
          durationMs: item.durationMs,
          reason: item.message,
        },
        `${plugin} ${item.name}: ${item.state}`,
      );
    }
  }

  finish(): void {}
}
