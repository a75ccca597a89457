// DRAINER_* variables that name no setting: a typo (DRAINER_NOVA_RETRYS) would otherwise be
// ignored without a word. Each gets a warning naming the closest setting. Never an error:
// Kubernetes injects <SERVICE>_SERVICE_HOST, <SERVICE>_PORT_… for a Service named "drainer" (or
// "drainer-…"), and our own test and bench tooling reads DRAINER_FT_*, DRAINER_TEST_*, DRAINER_BENCH_*.
import { envName } from './env.ts';
import { type Leaf, leaves } from './schema-walk.ts';

const SERVICE_LINKS =
  /^DRAINER(_[A-Z0-9_]+)?_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?)$/;
const TOOLING = /^DRAINER_(FT|TEST|BENCH)_/;

/** Edit distance (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/** One warning per DRAINER_* variable that is no setting, naming the closest one. */
export function unknownDrainerVars(env: NodeJS.ProcessEnv, all: readonly Leaf[] = leaves()): string[] {
  const known = new Map(all.map((l) => [envName(l.path), l.path.join('.')]));
  const out: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('DRAINER_') || known.has(name) || SERVICE_LINKS.test(name) || TOOLING.test(name))
      continue;
    let best: [string, string] | undefined;
    let score = Number.POSITIVE_INFINITY;
    for (const [candidate, key] of known) {
      const d = distance(name, candidate);
      if (d < score) [best, score] = [[candidate, key], d];
    }
    out.push(
      `${name} is not a drainer setting and is ignored${best ? ` (closest: ${best[0]}, the key ${best[1]})` : ''}`,
    );
  }
  return out;
}
