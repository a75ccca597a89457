// Writes REAL.md after a full run of the real suite, as bench/ writes BENCHMARKS.md: the machine, what each
// case proved or where it failed, and the figures the cases measured (test meta, support/context.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
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

/** The KubeVirt cases' files (test/real/*kubevirt*): they also run on their own, without OpenStack. */
const isKubeVirt = (m: TestModule) => path.basename(m.moduleId).includes('kubevirt');

const KUBEVIRT_NOTE =
  "KubeVirt cases: KubeVirt's own virt-api and virt-controller on the cluster; the node side (virt-handler, the second node's kubelet) is emulated by test/real/support/kubevirt/node-side.ts: no guest runs and no guest memory is copied.";

/** The cases' rows and figures, and how many passed. */
function tables(modules: ReadonlyArray<TestModule>): {
  rows: string[];
  figures: string[];
  passed: number;
  total: number;
} {
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
  return { rows, figures, passed, total };
}

const CASES_HEAD = ['| file | case | result | time | why it failed |', '|---|---|---|---|---|'];
const FIGURES_HEAD = ['| case | figure | value |', '|---|---|---|'];

/** How long the run took, as the result line says it. */
const took = (ms: number | undefined): string =>
  ms === undefined
    ? ''
    : ` in ${ms >= 120_000 ? `${(ms / 60_000).toFixed(1)} min` : `${Math.round(ms / 1000)} s`}`;

export function renderReal(
  modules: ReadonlyArray<TestModule>,
  now = new Date(),
  durationMs?: number,
): string {
  const { rows, figures, passed, total } = tables(modules);
  const cpu = os.cpus();
  return [
    '# Real cluster tests',
    '',
    'Written by `npm run test:real` (test/real/, README "Real cluster tests"): the stock `kubectl apply -k daemonset/`',
    'through the test overlay on a real kubelet, containerd and kube-apiserver, and a real Nova. Do not edit by hand.',
    ...(modules.some(isKubeVirt) ? ['', KUBEVIRT_NOTE] : []),
    '',
    `- when: ${now.toISOString()}; commit ${commit()}`,
    `- machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}`,
    `- result: ${passed} of ${total} cases passed${took(durationMs)}`,
    '',
    '## Cases',
    '',
    ...CASES_HEAD,
    ...rows,
    '',
    '## Figures',
    '',
    ...FIGURES_HEAD,
    ...figures,
    '',
  ].join('\n');
}

const KV_BEGIN = '<!-- KubeVirt cases run on their own: begin -->';
const KV_END = '<!-- KubeVirt cases run on their own: end -->';

/**
 * The KubeVirt files run on their own (no OpenStack up): their section of REAL.md, replacing the previous one and
 * leaving the full run's report above it as it was.
 */
export function withKubeVirtSection(
  existing: string,
  modules: ReadonlyArray<TestModule>,
  now = new Date(),
  durationMs?: number,
): string {
  const { rows, figures, passed, total } = tables(modules);
  const section = [
    KV_BEGIN,
    '## KubeVirt cases, run on their own',
    '',
    `Written by \`npm run test:real -- test/real/08k-kubevirt.test.ts\` with DRAINER_REAL_KUBEVIRT=1 and no OpenStack (docs/real-cluster-tests.md, "KubeVirt"). ${KUBEVIRT_NOTE}`,
    '',
    `- when: ${now.toISOString()}; commit ${commit()}`,
    `- result: ${passed} of ${total} cases passed${took(durationMs)}`,
    '',
    ...CASES_HEAD,
    ...rows,
    '',
    ...FIGURES_HEAD,
    ...figures,
    KV_END,
    '',
  ].join('\n');
  const begin = existing.indexOf(KV_BEGIN);
  const end = existing.indexOf(KV_END);
  if (begin >= 0 && end > begin)
    return existing.slice(0, begin) + section + existing.slice(end + KV_END.length + 1);
  return `${existing.trimEnd()}\n\n${section}`;
}

export default class RealReporter implements Reporter {
  #start = Date.now();

  onTestRunStart(): void {
    this.#start = Date.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const ms = Date.now() - this.#start;
    const files = readdirSync(path.join(ROOT, 'test/real')).filter((f) => f.endsWith('.test.ts'));
    const out = path.join(ROOT, 'REAL.md');
    if (modules.length >= files.length) {
      writeFileSync(out, renderReal(modules, new Date(), ms));
      console.log('REAL.md written');
      return;
    }
    // every KubeVirt file on its own: its section; any other partial run leaves the last full report alone
    const kubevirtFiles = files.filter((f) => f.includes('kubevirt'));
    if (modules.length === kubevirtFiles.length && modules.every(isKubeVirt) && kubevirtFiles.length > 0) {
      const ran = modules
        .flatMap((m) => [...m.children.allTests()])
        .some((t) => t.result().state !== 'skipped');
      if (!ran) return;
      writeFileSync(
        out,
        withKubeVirtSection(existsSync(out) ? readFileSync(out, 'utf8') : '', modules, new Date(), ms),
      );
      console.log('REAL.md: KubeVirt section written');
    }
  }
}
