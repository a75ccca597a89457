import { describe, expect, it } from 'vitest';
import {
  atMost,
  carryOver,
  info,
  renderMarkdown,
  upsertScenario,
  type ScenarioResult,
} from '../../bench/lib/report.ts';

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

describe('a scenario that runs apart (fleet-real) in BENCHMARKS.md', () => {
  const whole = renderMarkdown(
    [
      {
        scenario: 'fleet',
        command: 'node bench/run.ts fleet',
        figures: [info('a', 1)],
        notes: ['fleet note'],
        seconds: 1,
      },
      {
        scenario: 'run',
        command: 'npm run bench',
        figures: [info('whole', 2)],
        notes: ['run note'],
        seconds: 2,
      },
    ],
    machine,
    3,
  );
  const real = (value: number): ScenarioResult => ({
    scenario: 'fleet-real',
    title: 'fleet on a real API server',
    command: 'node bench/run.ts fleet-real',
    figures: [atMost('10 agents: idle requests per second per agent', value, 0.02)],
    notes: [`measured ${value}`],
    seconds: 5,
    extra: ['![plot](docs/fleet-real-requests.svg)'],
  });

  it('adds its rows to the table and its section before the run, leaving the rest as it was', () => {
    const md = upsertScenario(whole, real(0.01), machine);
    const lines = md.split('\n');
    const rows = lines.filter((l) => l.startsWith('| '));
    expect(rows.at(-1)).toContain(
      '| fleet-real | 10 agents: idle requests per second per agent | 0.01 | ≤ 0.02 | pass |',
    );
    expect(lines.indexOf('## fleet on a real API server')).toBeLessThan(lines.indexOf('## run'));
    expect(md).toContain('![plot](docs/fleet-real-requests.svg)');
    expect(md).toContain('- fleet note');
  });

  it("adds its rows to the summary table, not to a later section's own table", () => {
    const withImage = `${whole}\n## image\n\n| image | size |\n|---|---|\n| before | 379 MB |\n`;
    const lines = upsertScenario(withImage, real(0.01), machine).split('\n');
    const row = lines.findIndex((l) => l.startsWith('| fleet-real |'));
    expect(row).toBeGreaterThan(
      lines.indexOf('| scenario | figure | value | goal | pass/fail | machine | date | commit |'),
    );
    expect(row).toBeLessThan(lines.indexOf('## fleet'));
    expect(lines.slice(lines.indexOf('## image'))).not.toContainEqual(expect.stringContaining('fleet-real'));
  });

  it('puts a scenario measured again where it was: its rows before the later ones, its section in place', () => {
    const again = {
      scenario: 'fleet',
      command: 'node bench/run.ts fleet',
      figures: [info('a', 9)],
      notes: ['again'],
      seconds: 1,
    };
    const lines = upsertScenario(whole, again, machine).split('\n');
    const rows = lines.filter((l) => l.startsWith('| fleet |') || l.startsWith('| run |'));
    expect(rows[0]).toContain('| fleet | a | 9 |');
    expect(rows[1]).toContain('| run |');
    expect(lines.indexOf('## fleet')).toBeLessThan(lines.indexOf('## run'));
    expect(lines).toContain('- again');
    expect(lines).not.toContain('- fleet note');
  });

  it('replaces its rows and section when run again, and a whole run carries them over', () => {
    const twice = upsertScenario(upsertScenario(whole, real(0.01), machine), real(0.03), machine);
    expect(twice.split('\n').filter((l) => l.startsWith('| fleet-real'))).toHaveLength(1);
    expect(twice).toContain('| 0.03 | ≤ 0.02 | **FAIL** |');
    expect(twice).not.toContain('measured 0.01');
    expect(twice.split('\n').filter((l) => l === '## fleet on a real API server')).toHaveLength(1);

    const rewritten = carryOver(whole, twice, 'fleet-real', 'fleet on a real API server');
    expect(rewritten).toBe(twice);
    expect(carryOver(whole, whole, 'fleet-real', 'fleet on a real API server')).toBe(whole);
  });
});
