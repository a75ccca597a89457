// `npm run test:real`: without a real cluster it says so in one line and succeeds (CI has none);
// otherwise it runs the suite with its own vitest config, passing any further arguments on.
import { spawn } from 'node:child_process';
import { kubevirtEnv, REQUIRED, skipReason } from './support/env.ts';

const skip = skipReason(process.env);
if (skip) {
  console.log(skip);
  process.exit(0);
}
// the KubeVirt cases also run without an OpenStack (docs/real-cluster-tests.md, "KubeVirt"): then only they pass
const kubevirtAlone = process.env.DRAINER_REAL_KUBEVIRT === '1' && !process.env.DRAINER_REAL_OPENRC;
const missing = (kubevirtAlone ? REQUIRED.slice(0, 2) : REQUIRED).filter((k) => !process.env[k]);
if (missing.length > 0) {
  console.error(`test:real: set ${missing.join(', ')} as well (README "Real cluster tests")`);
  process.exit(2);
}
try {
  kubevirtEnv(process.env);
} catch (err) {
  console.error(`test:real: ${(err as Error).message}`);
  process.exit(2);
}
const vitest = spawn(
  process.execPath,
  ['node_modules/vitest/vitest.mjs', 'run', '--config', 'vitest.real.config.ts', ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
vitest.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
