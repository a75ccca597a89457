// vitest's reporter shows a skipped suite without its name: say why the real-Prometheus tests
// skip (README "When evacuations may start" promises the reason), once, before they run.
import { havePrometheus, PROMETHEUS_BIN } from './server.ts';

export default function announce(): void {
  if (!havePrometheus)
    process.stderr.write(
      `test:prometheus: skipped: ${PROMETHEUS_BIN} not found (apt-get install prometheus, or set PROMETHEUS_BIN)\n`,
    );
}
