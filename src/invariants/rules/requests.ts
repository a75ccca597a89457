// No request is answered 4xx except the expected ones, in the API server's answers and in the
// agents' log. Expected: 404 (absent: a delete of what is gone, a read of what is not there yet),
// 409 (a conflict: someone else wrote first, re-read), 410 (a watch or list continue too old:
// relist), 429 (an eviction a PDB refuses, or throttling), and the 422 of a JSON patch whose
// guarding `test` op failed (the same conflict as a 409: drainer re-reads and tries again; the
// answer looks like any rejected patch, so only the sandbox's request log can tell). Anything else is a bug or a fault.
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World } from '../world.ts';

export const EXPECTED_4XX: readonly number[] = [404, 409, 410, 429];

/**
 * Nova answers an abort (DELETE /servers/{id}/migrations/{mid}) 400 when the migration is no longer
 * running (InvalidMigrationState): it ended between drainer's look and the abort, a race no client avoids.
 */
const ABORT_TOO_LATE = /\/servers\/[^/]+\/migrations\/[^/]+$/;
const raceAnswer = (api: string, method: string, path: string, code: number): boolean =>
  api === 'nova' && method === 'DELETE' && code === 400 && ABORT_TOO_LATE.test(path);

/** "/api/v1/namespaces/x/pods/y?watch=1" → "/api/v1/namespaces/x/pods/y" (one finding per path). */
const pathOnly = (p: string): string => p.split('?')[0] ?? p;

/** Status codes a log line reports from an API (an error's details, or the message text). */
// "kubernetes DELETE /api/v1/…: 400 BadRequest" (src/kube/errors.ts), "nova POST /servers/…/action → 400" (plugins/nova/http.ts)
const API_ANSWER =
  /\b(kubernetes|nova|keystone|placement) (GET|POST|PUT|PATCH|DELETE) (\S+?)(?::| →) (4\d\d)\b/g;

function logAnswers(line: string): { api: string; method: string; path: string; code: number }[] {
  return [...line.matchAll(API_ANSWER)].map((m) => ({
    api: m[1] ?? '',
    method: m[2] ?? '',
    path: pathOnly(m[3] ?? ''),
    code: Number(m[4]),
  }));
}

export function unexpected4xx(world: World, opts: CheckOptions): Violation[] {
  const expected = new Set([...EXPECTED_4XX, ...(opts.expected4xx ?? [])]);
  const seen = new Map<string, { count: number; example: string; where: string }>();
  const note = (key: string, example: string, where: string) => {
    const s = seen.get(key);
    if (s) s.count++;
    else seen.set(key, { count: 1, example, where });
  };
  for (const r of world.observations?.requests ?? []) {
    if (r.status < 400 || r.status > 499 || expected.has(r.status) || r.guardFailed) continue;
    const who = r.userAgent ? ` (${r.userAgent})` : '';
    note(
      `api ${r.status} ${r.method} ${pathOnly(r.path)}`,
      `${r.method} ${r.path} → ${r.status}${who}`,
      'the API server answered',
    );
  }
  for (const line of world.observations?.logLines ?? []) {
    for (const a of logAnswers(line)) {
      if (expected.has(a.code) || raceAnswer(a.api, a.method, a.path, a.code)) continue;
      note(
        `log ${a.code} ${a.api} ${a.method} ${a.path}`,
        `${a.api} ${a.method} ${a.path}: ${a.code}`,
        "the agent's log says",
      );
    }
  }
  return [...seen.values()].map((s) =>
    violation(
      'unexpected-4xx',
      s.example.split(' → ')[0] ?? s.example,
      `${s.where} ${s.example}${s.count > 1 ? ` (${s.count} times)` : ''}`,
      'a request drainer should never send this way: the answer names the cause (rights: daemonset/clusterrole.yaml; a body the server rejects: a bug to file)',
    ),
  );
}
