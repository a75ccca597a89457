// Says once why the real-logind suite skips; under CI=true a machine that cannot run it fails the run.
// The Debian tree is made here, once, so no test waits minutes for it.
import { ensureRootfs, hostUnavailable } from './host.ts';

export default function announce(): void {
  const why = hostUnavailable();
  if (why && process.env.CI === 'true') throw new Error(`test:shutdown: ${why}`);
  if (why) {
    process.stderr.write(`test:shutdown: skipped: ${why}\n`);
    return;
  }
  ensureRootfs();
}
