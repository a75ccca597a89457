// Writes REAL.md after a full run of the real suite, as bench/ writes BENCHMARKS.md: the machine, what each
// case proved or where it failed, and the figures the cases measured (test meta, support/context.ts).
import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

const ROOT = path.resolve(import.meta.dirname, '../../..');

function commit(): string {
  const git = (...a: string[]) => execFileSync('git', a, { cwd: ROOT, encoding: 'utf8' }).trim();
  try {
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--', 'src', 'daemonset', 'Dockerfile', 'test/real') ? ' (with uncommitted changes)' : ''}`;
  } catch {
    return 'unknown';
  }
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim().slice(0, 300).replaceAll('|', '\\|');

export function renderReal(modules: ReadonlyArray<TestModule>, now = new Date()): string {
  const rows: string[] = [];
  const figures: string[] = [];
  let passed = 0;
  let total = 0;
  for (const m of [...modules].sort((a, b) => a.moduleId.localeCompare(b.moduleId))) {
    for (const t of m.children.allTests()) {
      const r = t.result();
      total += 1;
      if (r.state === 'passed') passed += 1;
      const secs = Math.round((t.diagnostic()?.duration ?? 0) / 1000);
      const why = r.state === 'failed' ? oneLine(r.errors?.[0]?.message ?? '') : '';
      rows.push(
        `| ${path.basename(m.moduleId)} | ${t.fullName} | ${r.state.toUpperCase()} | ${secs} s | ${why} |`,
      );
      for (const [k, v] of Object.entries(t.meta().figures ?? {}))
        figures.push(`| ${t.name} | ${k} | ${v} |`);
    }
  }
  const cpu = os.cpus();
  return [
    '# Real cluster tests',
    '',
    'Written by `npm run test:real` (test/real/, README "Real cluster tests"): the stock `kubectl apply -k daemonset/`',
    'through the test overlay on a real kubelet, containerd and kube-apiserver, and a real Nova. Do not edit by hand.',
    '',
    `- when: ${now.toISOString()}; commit ${commit()}`,
    `- machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}`,
    `- result: ${passed} of ${total} cases passed`,
    '',
    '## Cases',
    '',
    '| file | case | result | time | why it failed |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    '## Figures',
    '',
    '| case | figure | value |',
    '|---|---|---|',
    ...figures,
    '',
  ].join('\n');
}

export default class RealReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const files = readdirSync(path.join(ROOT, 'test/real')).filter((f) => f.endsWith('.test.ts'));
    // a run of some of the files (a filter, one file while developing) leaves the last full report alone
    if (modules.length < files.length) return;
    writeFileSync(path.join(ROOT, 'REAL.md'), renderReal(modules));
    console.log('REAL.md written');
  }
}
