// Story: `npm test` runs the typecheck and the lint beside vitest, not before it (scripts/test.ts). It
// still fails when any of them fails, says which and why, and lets the tests run to their end.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checks, runBeside, vitest, type Step } from '../../scripts/test.ts';

/** A step that runs `code` in a fresh Node. */
const node = (name: string, code: string): Step => ({ name, command: process.execPath, args: ['-e', code] });

function scratch() {
  const dir = mkdtempSync(path.join(tmpdir(), 'npm-test-'));
  return (name: string) => JSON.stringify(path.join(dir, name));
}

// The checks at normal priority but in the story of their priority: niced, a Node start waits seconds on a
// loaded machine.
async function runStory(main: Step, checkSteps: Step[], niceness = 0) {
  let said = '';
  const code = await runBeside(main, checkSteps, (t) => (said += t), niceness);
  return { code, said };
}

describe('npm test: the checks beside the tests', () => {
  it('passes when the checks and the tests pass, and says so in one line', async () => {
    const r = await runStory(node('vitest', ''), [node('typecheck', ''), node('lint', '')]);
    expect(r.code).toBe(0);
    expect(r.said).toMatch(
      /^npm test: typecheck passed in \d+ s, lint passed in \d+ s, vitest passed in \d+ s\n$/,
    );
  });

  it('fails when a check fails, with its output, and the tests still run to their end', async () => {
    const file = scratch();
    const r = await runStory(node('vitest', `require('fs').writeFileSync(${file('ran')}, 'yes')`), [
      node('typecheck', `console.log('src/a.ts(1,7): error TS2322'); process.exit(2)`),
      node('lint', ''),
    ]);
    expect(r.code).toBe(1);
    expect(r.said).toContain(
      'npm test: typecheck failed (exit 2); the tests go on, the run fails at their end:\nsrc/a.ts(1,7): error TS2322\n',
    );
    expect(r.said).toMatch(/typecheck FAILED \(exit 2\) in \d+ s, lint passed/);
    expect(readFileSync(JSON.parse(file('ran')) as string, 'utf8')).toBe('yes');
  });

  it('fails when the tests fail though every check passed', async () => {
    const r = await runStory(node('vitest', 'process.exit(1)'), [node('typecheck', '')]);
    expect(r.code).toBe(1);
    expect(r.said).toMatch(/vitest FAILED \(exit 1\)/);
  });

  it('runs the checks one after the other (each is CPU bound), not together', async () => {
    const file = scratch();
    const r = await runStory(node('vitest', ''), [
      node('typecheck', `setTimeout(() => require('fs').writeFileSync(${file('first')}, ''), 300)`),
      node('lint', `process.exit(require('fs').existsSync(${file('first')}) ? 0 : 3)`),
    ]);
    expect(r.said).toMatch(/lint passed/);
    expect(r.code).toBe(0);
  });

  it('runs the checks at the lowest CPU priority: the tests, which wait on real time, never queue behind them', async () => {
    const r = await runStory(
      node('vitest', `process.exit(require("os").getPriority() === ${getPriority()} ? 0 : 4)`),
      [node('typecheck', 'process.exit(require("os").getPriority() === 19 ? 0 : 5)')],
      19,
    );
    expect(r.said).toMatch(/typecheck passed in \d+ s, vitest passed/);
    expect(r.code).toBe(0);
  }, 120_000);

  it('a check that cannot start fails the run, naming it', async () => {
    const r = await runStory(node('vitest', ''), [
      { name: 'lint', command: '/nonexistent/eslint', args: [] },
    ]);
    expect(r.code).toBe(1);
    expect(r.said).toMatch(/npm test: lint failed \(exit 127\).*\n.*ENOENT/);
  });

  it("are the typecheck and lint scripts of package.json, and vitest gets npm test's arguments", () => {
    const pkg = JSON.parse(readFileSync(path.join(import.meta.dirname, '../../package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(checks.map((c) => [c.command, ...c.args].join(' '))).toEqual([
      'npm run --silent typecheck',
      'npm run --silent lint',
    ]);
    expect(pkg.scripts.typecheck).toBe('tsc -p tsconfig.json --noEmit');
    expect(pkg.scripts.lint).toMatch(/^eslint \. && prettier --check/);
    expect(pkg.scripts.test).toBe('node --import ./bin/node-gate.js scripts/test.ts');
    const step = vitest(['test/e2e/gate.test.ts']);
    expect(step.args.slice(-2)).toEqual(['run', 'test/e2e/gate.test.ts']);
    expect(existsSync(step.args[0]!)).toBe(true);
  });
});
