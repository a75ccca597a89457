// One row per figure; every scenario prints one JSON line, the run renders BENCHMARKS.md.

export interface Figure {
  readonly figure: string;
  readonly value: number | string;
  readonly unit?: string;
  /** Human form of the goal ("≤ 1.05"); absent for figures reported for context only. */
  readonly goal?: string;
  readonly pass?: boolean;
}

export interface ScenarioResult {
  readonly scenario: string;
  /** How to reproduce this scenario alone. */
  readonly command: string;
  readonly figures: readonly Figure[];
  /** What was measured and how (clock scale, poll interval …), and why a goal was missed. */
  readonly notes: readonly string[];
  readonly seconds: number;
}

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGb: number;
  readonly node: string;
  readonly date: string;
  readonly commit: string;
  /** 1-minute load average when the run started (the machine may be shared). */
  readonly load: number;
}

/** A goal of the form value ≤ limit. */
export function atMost(figure: string, value: number, limit: number, unit = ''): Figure {
  return { figure, value, unit, goal: `≤ ${limit}${unit ? ` ${unit}` : ''}`, pass: value <= limit };
}

export function info(figure: string, value: number | string, unit = ''): Figure {
  return { figure, value, unit };
}

const verdict = (f: Figure): string => (f.pass === undefined ? '' : f.pass ? 'pass' : '**FAIL**');

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderMarkdown(results: readonly ScenarioResult[], m: Machine, totalSeconds: number): string {
  const machine = `${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB`;
  const lines = [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (`node bench/run.ts`); do not edit by hand. Goals come from issue 8;',
    'a missed goal is marked **FAIL** and its cause is given under the scenario. Numbers are never tuned',
    'per machine.',
    '',
    `Machine: ${machine}; Node ${m.node}; load average ${m.load} at the start; date ${m.date}; ` +
      `commit \`${m.commit}\`; whole run ${totalSeconds.toFixed(0)} s.`,
    '',
    '| scenario | figure | value | goal | pass/fail | machine | date | commit |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    for (const f of r.figures) {
      const value = `${f.value}${f.unit ? ` ${f.unit}` : ''}`;
      lines.push(
        `| ${cell(r.scenario)} | ${cell(f.figure)} | ${cell(value)} | ${cell(f.goal ?? '')} | ${verdict(f)} | ${cell(machine)} | ${m.date} | ${m.commit.slice(0, 12)} |`,
      );
    }
  }
  lines.push('');
  for (const r of results) {
    const took = r.seconds > 0 ? `${r.seconds.toFixed(1)} s` : 'measured in the same run';
    lines.push(`## ${r.scenario}`, '', `Command: \`${r.command}\` (${took})`, '');
    for (const n of r.notes) lines.push(`- ${n}`);
    lines.push('');
  }
  return lines.join('\n');
}
