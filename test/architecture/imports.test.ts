// The layering of design.md §2, read from the import lines: errors and names on the ground floor,
// kube/ below core/, invariants/ beside core/ (below cli/), and no two files that import each other (directly or around a loop).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Each source file (relative to src/) and the source files it imports, type imports included. */
function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const f of files(SRC)) {
    const text = readFileSync(f, 'utf8');
    const deps = [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'(\.{1,2}\/[^']+)'/g)].map(
      (m) => relative(SRC, resolve(dirname(f), m[1] ?? '')),
    );
    g.set(relative(SRC, f), deps);
  }
  return g;
}

/** Every import cycle, each once, as the list of files around it. */
function cycles(g: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const seen = new Set<string>();
  const onStack: string[] = [];
  const visit = (f: string) => {
    if (onStack.includes(f)) {
      const loop = onStack.slice(onStack.indexOf(f));
      const key = [...loop].sort().join(' ');
      if (!found.some((c) => [...c].sort().join(' ') === key)) found.push(loop);
      return;
    }
    if (seen.has(f)) return;
    seen.add(f);
    onStack.push(f);
    for (const d of g.get(f) ?? []) visit(d);
    onStack.pop();
  };
  for (const f of g.keys()) visit(f);
  return found;
}

describe('import layering', () => {
  const g = graph();

  it('keeps kube/ below core/: no file of src/kube imports from src/core', () => {
    const up = [...g].flatMap(([f, deps]) =>
      f.startsWith('kube/') ? deps.filter((d) => d.startsWith('core/')).map((d) => `${f} → ${d}`) : [],
    );
    expect(up).toEqual([]);
  });

  it('keeps the typed errors and the shared names on the ground floor (they import nothing of ours)', () => {
    expect(g.get('errors.ts')).toEqual([]);
    expect(g.get('names.ts')).toEqual([]);
  });

  it('keeps the demo below the CLI: the CLI starts the demo, the demo never reaches up into src/cli', () => {
    const up = [...g].flatMap(([f, deps]) =>
      f.startsWith('demo/') ? deps.filter((d) => d.startsWith('cli/')).map((d) => `${f} → ${d}`) : [],
    );
    expect(up).toEqual([]);
  });

  it('keeps output/ (text for people) on a floor of its own: it imports nothing of ours', () => {
    const deps = [...g].filter(([f]) => f.startsWith('output/')).flatMap(([, d]) => d);
    expect(deps).toEqual([]);
  });

  it('keeps invariants/ beside core/: it imports no cli/, plugins/ or sandbox/ file, and core/ and kube/ import nothing of it', () => {
    const wrong = [...g].flatMap(([f, deps]) =>
      deps
        .filter(
          (d) =>
            (f.startsWith('invariants/') && /^(cli|plugins|sandbox)\//.test(d)) ||
            (/^(core|kube)\//.test(f) && d.startsWith('invariants/')),
        )
        .map((d) => `${f} → ${d}`),
    );
    expect(wrong).toEqual([]);
  });

  it('has no import cycles', () => {
    expect(cycles(g).map((c) => c.join(' → '))).toEqual([]);
  });
});
