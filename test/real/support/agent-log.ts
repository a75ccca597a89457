// No unexpected 4xx (issue 48 item 8): a case fails when the agent's log holds an API answer in the
// 4xx range that the case did not declare. drainer's errors name the answer the same way for every
// API ("kubernetes PUT /apis/…/leases/x: 400 BadRequest: …", "nova POST /servers/…: 409 …"), so the
// log lines are read as text: JSON or not, with the error nested or in the message.
import type { Kubectl, Obj } from './kubectl.ts';

/** A 4xx a case provokes or allows on purpose: its code, and the requests it is about (path pattern). */
export interface Expected4xx {
  readonly code: number;
  readonly path?: RegExp;
  readonly why: string;
}

/** One answer seen in the log. */
export interface Seen4xx {
  readonly api: string;
  readonly method: string;
  readonly path: string;
  readonly code: number;
  /** The first log line that shows it (cut). */
  readonly line: string;
}

const ANSWER =
  /\b(kubernetes|nova|keystone|placement|compute|kubevirt) (GET|POST|PUT|PATCH|DELETE) (\/[^\s:"]*): (4\d\d)\b/g;

/** Every distinct 4xx answer named in the log lines (api, method, path without query, code). */
export function fourXxIn(lines: readonly string[]): Seen4xx[] {
  const seen = new Map<string, Seen4xx>();
  for (const line of lines)
    for (const m of line.matchAll(ANSWER)) {
      const [, api = '', method = '', path = '', code = ''] = m;
      const key = `${api} ${method} ${path} ${code}`;
      if (!seen.has(key)) seen.set(key, { api, method, path, code: Number(code), line: line.slice(0, 400) });
    }
  return [...seen.values()];
}

/** The 4xx answers no expectation covers. */
export function unexpected4xx(seen: readonly Seen4xx[], expected: readonly Expected4xx[]): Seen4xx[] {
  return seen.filter((s) => !expected.some((e) => e.code === s.code && (!e.path || e.path.test(s.path))));
}

/** The lines every agent pod (the DaemonSet's, and the container before a restart) logged since `since`. */
export async function agentLogSince(
  k: Kubectl,
  namespace: string,
  agents: readonly Obj[],
  since: Date,
): Promise<string[]> {
  const sinceTime = `--since-time=${since.toISOString().replace(/\.\d+Z$/, 'Z')}`;
  const lines: string[] = [];
  for (const pod of agents) {
    const name = String(pod.metadata.name);
    for (const previous of [[], ['--previous']]) {
      const r = await k.run(['logs', '-n', namespace, name, sinceTime, ...previous], { timeoutMs: 60_000 });
      // no previous container, or a pod gone meanwhile: nothing to read there
      if (r.code === 0) lines.push(...r.stdout.split('\n').filter(Boolean));
    }
  }
  return lines;
}

/** The failure text for unexpected answers, or undefined when there are none. */
export function unexpected4xxText(found: readonly Seen4xx[]): string | undefined {
  if (!found.length) return undefined;
  const each = found.map((s) => `  - ${s.api} ${s.method} ${s.path} → ${s.code}: ${s.line}`);
  return `the agent's log holds ${found.length} 4xx answer(s) this case did not expect (declare one with expect4xx if it is on purpose):\n${each.join('\n')}`;
}
