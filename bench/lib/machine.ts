// What the figures were measured on: cpu, cores, memory, Node, date, and the commit (read-only git).
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import type { Machine } from './report.ts';

function commit(cwd: string): string {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

export function describeMachine(cwd: string): Machine {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    date: new Date().toISOString().slice(0, 10),
    commit: commit(cwd),
    load: Math.round(os.loadavg()[0]! * 100) / 100,
  };
}
