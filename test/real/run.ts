// `npm run test:real`: without a real cluster it says so in one line and succeeds (CI has none);
// otherwise it runs the suite with its own vitest config, passing any further arguments on.
import { spawn } from 'node:child_process';
import { REQUIRED, skipReason } from './support/env.ts';

const skip = skipReason(process.env);
if (skip) {
  console.log(skip);
  process.exit(0);
}
const missing = REQUIRED.filter((k) => !process.env[k]);
if (missing.length > 0) {
  console.error(`test:real: set ${missing.join(', ')} as well (README "Real cluster tests")`);
  process.exit(2);
}
const vitest = spawn(
  process.execPath,
  ['node_modules/vitest/vitest.mjs', 'run', '--config', 'vitest.real.config.ts', ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
vitest.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
