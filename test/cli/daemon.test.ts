import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { runDaemon } from '../../src/cli/daemon.ts';
import { cli } from './harness.ts';
import { isConfigError } from '../../src/errors.ts';
import { createLogger } from '../../src/observability/logger.ts';

describe('drainer daemon', () => {
  it('refuses to start without NODE_NAME, saying how to set it', async () => {
    const err: unknown = await runDaemon({
      config: configSchema.parse({}),
      log: createLogger({ level: 'silent' }),
      signal: new AbortController().signal,
    }).catch((e: unknown) => e);

    expect(isConfigError(err)).toBe(true);
    expect((err as Error).message).toMatch(/nodeName: NODE_NAME is required in daemon mode/);
  });
});

describe('drainer daemon command line', () => {
  it('exits 2 with one clear line when NODE_NAME is missing', async () => {
    const run = cli({ env: {} });
    const result = await run('daemon');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: nodeName: NODE_NAME is required in daemon mode/m);
    expect(result.stderr).not.toMatch(/at .*\.ts:\d+/); // no stack trace
  });

  it("accepts the old tool's -daemon spelling", async () => {
    const run = cli({ env: {} });
    const result = await run('-daemon');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/NODE_NAME is required/);
  });
});
