// DRAINER_* variables that name no setting: a typo (DRAINER_NOVA_RETRYS) would otherwise be
// ignored without a word. Each gets a warning naming the closest setting. Never an error:
// Kubernetes injects <SERVICE>_SERVICE_HOST, <SERVICE>_PORT_… for a Service named "drainer" (or
// "drainer-…"), and our own test and bench tooling reads DRAINER_FT_*, DRAINER_TEST_*, DRAINER_BENCH_*.
import { closest } from './closest.ts';
import { envName } from './env.ts';
import { type Leaf, leaves } from './schema-walk.ts';

const SERVICE_LINKS =
  /^DRAINER(_[A-Z0-9_]+)?_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?)$/;
const TOOLING = /^DRAINER_(FT|TEST|BENCH)_/;

/** One warning per DRAINER_* variable that is no setting, naming the closest one. */
export function unknownDrainerVars(env: NodeJS.ProcessEnv, all: readonly Leaf[] = leaves()): string[] {
  const known = new Map(all.map((l) => [envName(l.path), l.path.join('.')]));
  const out: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('DRAINER_') || known.has(name) || SERVICE_LINKS.test(name) || TOOLING.test(name))
      continue;
    const best = closest(name, known);
    out.push(
      `${name} is not a drainer setting and is ignored${best ? ` (closest: ${best.name}, the key ${best.value})` : ''}`,
    );
  }
  return out;
}
