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
  /** The section's heading when it is not the scenario's name. */
  readonly title?: string;
  /** Lines under the notes (a plot). */
  readonly extra?: readonly string[];
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
  const machine = machineOf(m);
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
  for (const r of results) lines.push(...rows(r, m));
  lines.push('');
  for (const r of results) lines.push(...section(r));
  return lines.join('\n');
}

const machineOf = (m: Machine): string => `${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB`;

function rows(r: ScenarioResult, m: Machine): string[] {
  const machine = machineOf(m);
  return r.figures.map((f) => {
    const value = `${f.value}${f.unit ? ` ${f.unit}` : ''}`;
    return `| ${cell(r.scenario)} | ${cell(f.figure)} | ${cell(value)} | ${cell(f.goal ?? '')} | ${verdict(f)} | ${cell(machine)} | ${m.date} | ${m.commit.slice(0, 12)} |`;
  });
}

function section(r: ScenarioResult): string[] {
  const took = r.seconds > 0 ? `${r.seconds.toFixed(1)} s` : 'measured in the same run';
  return [
    `## ${r.title ?? r.scenario}`,
    '',
    `Command: \`${r.command}\` (${took})`,
    '',
    ...r.notes.map((n) => `- ${n}`),
    ...(r.extra?.length ? ['', ...r.extra] : []),
    '',
  ];
}

/**
 * BENCHMARKS.md with one scenario's rows and section put in place of its old ones (or added: rows
 * at the table's end, the section before `## run`); everything else as it was. For scenarios that
 * run apart from `npm run bench` (fleet-real needs a real API server).
 */
export function upsertScenario(markdown: string, r: ScenarioResult, m: Machine): string {
  return upsertText(markdown, {
    scenario: r.scenario,
    heading: r.title ?? r.scenario,
    rows: rows(r, m),
    section: section(r),
  });
}

interface ScenarioText {
  readonly scenario: string;
  readonly heading: string;
  readonly rows: readonly string[];
  readonly section: readonly string[];
}

function upsertText(markdown: string, t: ScenarioText): string {
  const isRow = (l: string) => l.startsWith(`| ${cell(t.scenario)} |`);
  const lines = markdown.split('\n');
  // its rows where they were (else at the table's end), its section where it was (else before the run's)
  const firstRow = lines.findIndex(isRow);
  const kept = lines.filter((l) => !isRow(l));
  const rowsAt = firstRow >= 0 ? firstRow : endOfSummaryTable(kept);
  kept.splice(rowsAt, 0, ...t.rows);
  let at = kept.indexOf(`## ${t.heading}`);
  if (at >= 0) {
    const next = kept.findIndex((l, i) => i > at && l.startsWith('## '));
    kept.splice(at, (next < 0 ? kept.length : next) - at);
  } else {
    at = kept.indexOf('## run');
    if (at < 0) at = kept.length;
  }
  kept.splice(at, 0, ...t.section);
  return kept.join('\n');
}

/** The line after the summary table's last row: later sections (image, real guests) have tables of their own. */
function endOfSummaryTable(lines: readonly string[]): number {
  const header = lines.findIndex((l) => l.startsWith('| scenario |'));
  if (header < 0) return lines.length;
  const end = lines.findIndex((l, i) => i > header && !l.startsWith('|'));
  return end < 0 ? lines.length : end;
}

/**
 * `rendered` (a whole run's file) with a scenario the run did not do carried over from `old`, as
 * `old` had it: fleet-real's figures survive `npm run bench`.
 */
export function carryOver(rendered: string, old: string, scenario: string, heading: string): string {
  const lines = old.split('\n');
  const at = lines.indexOf(`## ${heading}`);
  if (at < 0) return rendered;
  const next = lines.findIndex((l, i) => i > at && l.startsWith('## '));
  return upsertText(rendered, {
    scenario,
    heading,
    rows: lines.filter((l) => l.startsWith(`| ${cell(scenario)} |`)),
    section: lines.slice(at, next < 0 ? lines.length : next),
  });
}
