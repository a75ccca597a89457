import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { configSchema } from '../../src/config/schema.ts';
import { world } from './helpers.ts';

async function configError(p: Promise<unknown>): Promise<ConfigError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ConfigError);
  return e as ConfigError;
}

describe('loadConfig layers', () => {
  it('gives the schema defaults when there is no file, env or flag', async () => {
    const w = world();
    expect(await w.load()).toEqual(configSchema.parse({}));
  });

  it('lets each layer override the previous: defaults < file < DRAINER_* env < flags', async () => {
    const w = world();
    w.write(
      path.join(w.cwd, 'config.yaml'),
      'logLevel: debug\nnova:\n  retries: 5\n  pollInterval: 7\nevacuation:\n  timeout: 10m\n',
    );
    const env = { DRAINER_NOVA_RETRIES: '6', DRAINER_EVACUATION_TIMEOUT: '20m', DRAINER_LOG_LEVEL: 'warn' };

    const fileOnly = await w.load();
    const withEnv = await w.load({ env });
    const withFlags = await w.load({ env, argv: { evacuationTimeout: '30m', logLevel: 'error' } });

    expect([fileOnly.logLevel, fileOnly.nova.retries, fileOnly.evacuation.timeout]).toEqual([
      'debug',
      5,
      600,
    ]);
    expect([withEnv.logLevel, withEnv.nova.retries, withEnv.evacuation.timeout]).toEqual(['warn', 6, 1200]);
    expect([withFlags.logLevel, withFlags.nova.retries, withFlags.evacuation.timeout]).toEqual([
      'error',
      6,
      1800,
    ]);
    expect(withFlags.nova.pollInterval).toBe(7); // untouched keys keep the lower layer's value
    expect(withFlags.nova.maxConcurrentMigrations).toBe(1);
  });

  it('reads NODE_NAME and KUBECONFIG, with DRAINER_* and --node above them', async () => {
    const w = world();
    const env = { NODE_NAME: 'from-downward-api', KUBECONFIG: '/k/config' };
    expect(await w.load({ env })).toMatchObject({ nodeName: 'from-downward-api', kubeconfig: '/k/config' });
    expect((await w.load({ env: { ...env, DRAINER_NODE_NAME: 'explicit' } })).nodeName).toBe('explicit');
    expect((await w.load({ env, argv: { node: 'flag' } })).nodeName).toBe('flag');
  });

  it('coerces env values by the schema type: booleans, numbers, durations and JSON records', async () => {
    const w = world();
    const c = await w.load({
      env: {
        DRAINER_DRY_RUN: 'yes',
        DRAINER_NOVA_ABORT_ON_TIMEOUT: 'false',
        DRAINER_NOVA_MAX_CONCURRENT_MIGRATIONS: '4',
        DRAINER_NOVA_MIGRATION_TIMEOUT: '15m',
        DRAINER_NOVA_RETRY_BACKOFF: '2.5',
        DRAINER_NOVA_HOST_MAPPING: '{"node-1":"compute-1.example.com"}',
        DRAINER_SERVER_PORT: '9090',
        DRAINER_PORT: 'tcp://10.0.0.1:8080', // a Kubernetes service link: ignored, not an error
      },
    });
    expect(c.dryRun).toBe(true);
    expect(c.nova).toMatchObject({
      abortOnTimeout: false,
      maxConcurrentMigrations: 4,
      migrationTimeout: 900,
      retryBackoff: 2.5,
      hostMapping: { 'node-1': 'compute-1.example.com' },
    });
    expect(c.server.port).toBe(9090);
  });

  it('replaces a record from a lower layer instead of merging entries', async () => {
    const w = world();
    w.write(path.join(w.cwd, 'config.yaml'), 'nova:\n  hostMapping:\n    a: x\n');
    const c = await w.load({ env: { DRAINER_NOVA_HOST_MAPPING: '{"b":"y"}' } });
    expect(c.nova.hostMapping).toEqual({ b: 'y' });
  });

  it('returns a frozen config', async () => {
    const c = await world().load();
    expect(Object.isFrozen(c.nova)).toBe(true);
  });
});

describe('loadConfig errors', () => {
  it('accepts a missing default config.yaml but not a missing explicit one', async () => {
    const w = world();
    await expect(w.load()).resolves.toBeDefined();
    const e = await configError(w.load({ configPath: 'nope.yaml' }));
    expect(e.message).toContain(path.join(w.cwd, 'nope.yaml'));
  });

  it('reports every problem of a file with its key path, what was expected and the file name', async () => {
    const w = world();
    const file = w.write(
      path.join(w.cwd, 'config.yaml'),
      'nova:\n  maxConcurrentMigrations: 0\n  retries: 1.5\n  max_concurrent_migrations: 2\nlogLevel: loud\nbogus: 1\n',
    );
    const e = await configError(w.load());
    expect(e.issues.map((i) => `${i.path}: ${i.message}`)).toEqual(
      expect.arrayContaining([
        `nova.maxConcurrentMigrations: expected an integer >= 1, got 0 (in ${file})`,
        `nova.retries: expected an integer, got 1.5 (in ${file})`,
        `nova.max_concurrent_migrations: unknown key (did you mean "maxConcurrentMigrations"?) (in ${file})`,
        `logLevel: expected one of fatal, error, warn, info, debug, trace, silent, got "loud" (in ${file})`,
        `bogus: unknown key (in ${file})`,
      ]),
    );
    expect(e.issues).toHaveLength(5);
  });

  it('names the file and line of a YAML syntax error', async () => {
    const w = world();
    const file = w.write(path.join(w.cwd, 'config.yaml'), 'nova:\n  retries: [1\n');
    const e = await configError(w.load());
    expect(e.issues[0]?.path).toBe(file);
    expect(e.issues[0]?.message).toMatch(/YAML syntax error at line \d+/);
  });

  it('names the variable of a bad env value', async () => {
    const e = await configError(
      world().load({ env: { DRAINER_NOVA_RETRIES: 'many', DRAINER_NOVA_MAX_CONCURRENT_MIGRATIONS: '0' } }),
    );
    expect(e.issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'nova.retries: expected a number, got "many" (in DRAINER_NOVA_RETRIES)',
      'nova.maxConcurrentMigrations: expected an integer >= 1, got 0 (in DRAINER_NOVA_MAX_CONCURRENT_MIGRATIONS)',
    ]);
  });

  it('never puts a secret value into a message', async () => {
    const w = world();
    w.write(path.join(w.cwd, 'config.yaml'), 'openstack:\n  auth:\n    password: 123456789\n');
    const e = await configError(
      w.load({
        env: { DRAINER_OPENSTACK_AUTH_APPLICATION_CREDENTIAL_SECRET: 'x', DRAINER_DRY_RUN: 'hunter2' },
      }),
    );
    expect(e.message).toContain('openstack.auth.password: expected a string, got a number');
    expect(e.message).not.toContain('123456789');
  });
});
