// A tiny test client for the sandbox Keystone + Nova (fetch; no retries, nothing hidden).
import { ScaledClock } from '../../../src/sandbox/clock.ts';
import { startOpenStack } from '../../../src/sandbox/openstack/index.ts';
import type { OpenStackSandbox, StartOpenStackOptions } from '../../../src/sandbox/openstack/index.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON bodies, asserted field by field in tests
export interface Answer<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A sandbox on a fast clock (100 simulated ms per real ms) with two hosts unless told otherwise. */
export function start(opts: Partial<StartOpenStackOptions> = {}): Promise<OpenStackSandbox> {
  return startOpenStack({
    clock: new ScaledClock(100),
    hosts: [{ name: 'compute-a' }, { name: 'compute-b' }],
    servers: [],
    ...opts,
  });
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export async function authenticate(os: OpenStackSandbox, body: unknown): Promise<Answer> {
  const res = await fetch(`${os.identityUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return answer(res);
}

export function passwordAuth(user: string, password: string, project = user): unknown {
  return {
    auth: {
      identity: {
        methods: ['password'],
        password: { user: { name: user, domain: { name: 'Default' }, password } },
      },
      scope: { project: { name: project, domain: { id: 'default' } } },
    },
  };
}

/** A token for the built-in admin or demo user. */
export async function token(os: OpenStackSandbox, who: 'admin' | 'demo' = 'admin'): Promise<string> {
  const res = await authenticate(os, passwordAuth(who, os.credentials[who].password));
  const t = res.headers.get('x-subject-token');
  if (res.status !== 201 || !t) throw new Error(`auth failed: ${res.status}`);
  return t;
}

export interface NovaCall {
  token: string;
  version?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export async function nova(
  os: OpenStackSandbox,
  method: string,
  path: string,
  call: NovaCall,
): Promise<Answer> {
  const headers: Record<string, string> = { 'X-Auth-Token': call.token, ...call.headers };
  if (call.version) headers['OpenStack-API-Version'] = `compute ${call.version}`;
  if (call.body !== undefined) headers['Content-Type'] = 'application/json';
  const url = path.startsWith('http') ? path : `${os.computeUrl}${path}`;
  const res = await fetch(url, {
    method,
    headers,
    ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
  });
  return answer(res);
}

/** Polls until `check` returns a value (not undefined); real-time bound only against hangs. */
export async function until<T>(
  check: () => T | undefined | Promise<T | undefined>,
  what: string,
): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

export const liveMigrate = (host: string | null = null) => ({
  'os-migrateLive': { host, block_migration: 'auto' },
});
