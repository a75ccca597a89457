import got from 'got';
import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.ts';
import { ApiError, TransientError } from '../../src/errors.ts';

const PASSWORD = 'hunter2-password';
const TOKEN = 'gAAAAA-token-value';
const SUBJECT = 'gAAAAA-subject-token';
const APP_SECRET = 'app-cred-secret-value';

function capture() {
  const lines: string[] = [];
  const log = createLogger({ level: 'trace', destination: { write: (l: string) => void lines.push(l) } });
  return { log, lines, all: () => lines.join('') };
}

function expectNoSecrets(text: string) {
  for (const s of [PASSWORD, TOKEN, SUBJECT, APP_SECRET]) expect(text).not.toContain(s);
}

afterEach(() => nock.cleanAll());

describe('logger redaction', () => {
  it('censors secret-named keys at any depth, including in child bindings', () => {
    const { log, all } = capture();
    log.child({ node: 'n1' }).child({ token: TOKEN }).info('from a grandchild');
    log.child({ auth: { password: PASSWORD } }).info(
      {
        a: { b: { c: { d: { e: { headers: { 'X-Auth-Token': TOKEN, 'x-subject-token': SUBJECT } } } } } },
        applicationCredentialSecret: APP_SECRET,
        auth: { application_credential: { secret: APP_SECRET } },
      },
      'hello',
    );
    expectNoSecrets(all());
    expect(all()).toContain('[REDACTED]');
    expect(all()).toContain('hello');
  });

  it('censors secret headers inside a fetch Headers object and keeps the others', () => {
    const { log, all } = capture();
    log.info({ response: { headers: new Headers({ 'X-Subject-Token': SUBJECT, 'x-request-id': 'req-7' }) } });
    expectNoSecrets(all());
    expect(JSON.parse(all()).response.headers).toEqual({
      'x-subject-token': '[REDACTED]',
      'x-request-id': 'req-7',
    });
  });

  it('logs a got HTTPError with status, method and URL but none of its headers or body', async () => {
    nock('http://keystone.test')
      .post('/v3/auth/tokens')
      .query(true)
      .reply(
        401,
        { error: { message: 'nope' } },
        { 'X-Subject-Token': SUBJECT, 'x-openstack-request-id': 'req-1' },
      );
    const { log, all } = capture();
    const err = await got
      .post('http://keystone.test/v3/auth/tokens?token=' + TOKEN, {
        headers: { 'X-Auth-Token': TOKEN },
        json: { auth: { identity: { password: { user: { name: 'admin', password: PASSWORD } } } } },
        retry: { limit: 0 },
      })
      .catch((e: unknown) => e);
    log.error({ err }, 'keystone failed');
    log.error(err as Error);
    log.warn({ wrapped: new ApiError('AUTH', 'rejected', { api: 'keystone', status: 401 }, { cause: err }) });

    expectNoSecrets(all());
    const first = JSON.parse(all().split('\n')[0]!);
    expect(first.err).toMatchObject({
      type: 'HTTPError',
      status: 401,
      method: 'POST',
      url: 'http://keystone.test/v3/auth/tokens?token=REDACTED',
      requestId: 'req-1',
    });
    expect(all()).toContain('"cause":{"type":"HTTPError"');
  });

  it('drops a PEM private key wherever it appears', () => {
    const { log, all } = capture();
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----';
    log.info({ tls: { key: pem }, nested: [pem] });
    expect(all()).not.toContain('MIIabc');
  });

  it('keeps ordinary keys such as a taint key readable', () => {
    const { log, all } = capture();
    log.info({ taint: { key: 'drainer.dev/evacuating', effect: 'NoSchedule' } });
    expect(all()).toContain('drainer.dev/evacuating');
  });

  it('survives cycles in logged objects', () => {
    const { log, all } = capture();
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    log.info({ a });
    expect(all()).toContain('[Circular]');
  });
});

describe('logger keys', () => {
  const countKey = (line: string, key: string) => line.split(`"${key}":`).length - 1;

  it('writes the key node once, however many children and calls name it', () => {
    const { log, lines } = capture();
    const agent = log.child({ node: 'node-1' });
    const reconciler = agent.child({ node: 'node-1' });
    reconciler.child({ plugin: 'nova', node: 'node-1' }).warn({ node: 'node-1' }, 'plan failed');
    reconciler.info({ node: 'node-1', phase: 'Evacuating' }, 'evacuating');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(countKey(line, 'node'), line).toBe(1);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      node: 'node-1',
      plugin: 'nova',
      msg: 'plan failed',
    });
    expect(JSON.parse(lines[1] ?? '{}')).toMatchObject({ node: 'node-1', phase: 'Evacuating' });
  });

  it('keeps what every ancestor bound: a plugin line names its node and agent instance', () => {
    const { log, lines } = capture();
    log.child({ instance: 'hv-1-pod-2' }).child({ node: 'hv-1' }).child({ plugin: 'nova' }).info('moved');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      instance: 'hv-1-pod-2',
      node: 'hv-1',
      plugin: 'nova',
      msg: 'moved',
    });
  });

  it('keeps a key whose value differs from the bound one (another node)', () => {
    const { log, lines } = capture();
    log.child({ node: 'node-1' }).info({ node: 'node-2' }, 'about another node');
    expect(lines[0]).toContain('"node":"node-2"');
  });
});

describe('logger stacks', () => {
  const lineOf = (level: string, err: Error) => {
    const lines: string[] = [];
    const log = createLogger({ level, destination: { write: (l: string) => void lines.push(l) } });
    log.warn({ err }, 'it failed');
    return JSON.parse(lines[0] ?? '{}') as { err: { message: string; stack?: string } };
  };
  const refused = () =>
    new TransientError('keystone POST http://k/v3/auth/tokens: connection refused (hint: …)', {
      api: 'keystone',
    });

  it('logs an expected failure (no answer, refused credentials) without its stack at the default level', () => {
    const line = lineOf('info', refused());
    expect(line.err.message).toMatch(/connection refused/);
    expect(line.err.stack).toBeUndefined();
  });

  it('keeps the stack at debug, and for an unexpected error at any level', () => {
    expect(lineOf('debug', refused()).err.stack).toMatch(/TransientError: keystone POST/);
    expect(lineOf('info', new TypeError('cannot read x of undefined')).err.stack).toMatch(/^TypeError: /);
  });
});
