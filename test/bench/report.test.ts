import { describe, expect, it } from 'vitest';
import { atMost, info, renderMarkdown, type ScenarioResult } from '../../bench/lib/report.ts';

const machine = {
  cpu: 'Test CPU',
  cores: 2,
  memoryGb: 4,
  node: 'v24',
  date: '2026-01-01',
  commit: 'abc123',
  load: 0.5,
};

describe('the BENCHMARKS.md table', () => {
  it('marks a missed goal FAIL and keeps context figures without a verdict', () => {
    const result: ScenarioResult = {
      scenario: 'makespan',
      command: 'node bench/run.ts makespan',
      figures: [atMost('ratio', 1.2, 1.05), atMost('cost', 2, 3), info('ideal', '10 s')],
      notes: ['Missed: the poll interval.'],
      seconds: 1,
    };
    const md = renderMarkdown([result], machine, 12);
    const rows = md.split('\n').filter((l) => l.startsWith('| makespan'));
    expect(rows).toHaveLength(3);
    expect(rows[0]).toContain('| 1.2 | ≤ 1.05 | **FAIL** | Test CPU, 2 cores, 4 GB | 2026-01-01 | abc123 |');
    expect(rows[1]).toContain('| pass |');
    expect(rows[2]).toMatch(/\| ideal \| 10 s \| {2}\| {2}\|/);
    expect(md).toContain('Command: `node bench/run.ts makespan`');
    expect(md).toContain('- Missed: the poll interval.');
  });

  it('escapes pipes inside cells so the table keeps its columns', () => {
    const md = renderMarkdown(
      [{ scenario: 's', command: 'c', figures: [info('a | b', 'x|y')], notes: [], seconds: 0 }],
      machine,
      0,
    );
    expect(md).toContain('| a \\| b | x\\|y |');
  });
});
