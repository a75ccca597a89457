// The script of an owner's power and shelve actions (owner-actions.test.ts), run the same way
// against the real Nova and the sandbox's, and how two runs of it differ.
import { READ_MV } from './nova.ts';
import type { Session, Body } from './session.ts';
import { waitFor } from './wait.ts';

export interface Step {
  call: string;
  status: number;
  /** Nova's message for a refusal, the server's id written <id>. */
  message?: string;
  /** `STATUS/task_state` as seen while it settled, each change once. */
  seen?: string[];
  /** The settled server's fields that drainer reads. */
  facts?: Record<string, unknown>;
}

const stateOf = (s: Body) => `${s.status}/${s['OS-EXT-STS:task_state'] ?? '-'}`;

/** One owner's day: stop, stop again, start, shelve (offloaded), start and stop an offloaded one, unshelve. */
export async function ownerScript(admin: Session, id: string): Promise<Step[]> {
  const steps: Step[] = [];
  const show = async (): Promise<Body> =>
    (await admin.request('compute', 'GET', `/servers/${id}`, { microversion: READ_MV })).body.server;
  const act = async (call: string, body: Record<string, unknown>, until?: (s: Body) => boolean) => {
    const res = await admin.request('compute', 'POST', `/servers/${id}/action`, {
      microversion: READ_MV,
      json: body,
    });
    const refusal = res.body && typeof res.body === 'object' ? Object.values(res.body)[0] : undefined;
    const message = (refusal as { message?: string } | undefined)?.message?.replaceAll(id, '<id>');
    const step: Step = { call, status: res.status, ...(message ? { message } : {}) };
    steps.push(step);
    if (!until || res.status >= 300) return;
    const seen: string[] = [];
    const settled = await waitFor(
      async () => {
        const s = await show();
        if (seen.at(-1) !== stateOf(s)) seen.push(stateOf(s));
        return until(s) ? s : undefined;
      },
      { what: `${call} to settle`, timeoutMs: 240_000, intervalMs: 100 },
      () => seen.join(' → '),
    );
    step.seen = seen;
    step.facts = {
      status: settled.status,
      vm_state: settled['OS-EXT-STS:vm_state'],
      power_state: settled['OS-EXT-STS:power_state'],
      hasHost: settled['OS-EXT-SRV-ATTR:host'] !== null,
      hasHypervisor: settled['OS-EXT-SRV-ATTR:hypervisor_hostname'] !== null,
    };
  };
  const idle = (status: string) => (s: Body) => s.status === status && !s['OS-EXT-STS:task_state'];

  await act('os-stop', { 'os-stop': null }, idle('SHUTOFF'));
  await act('os-stop of a SHUTOFF server', { 'os-stop': null });
  await act('os-start', { 'os-start': null }, idle('ACTIVE'));
  await act('shelve', { shelve: null }, (s) => idle('SHELVED_OFFLOADED')(s) && !s['OS-EXT-SRV-ATTR:host']);
  await act('os-start of an offloaded server', { 'os-start': null });
  await act('os-stop of an offloaded server', { 'os-stop': null });
  await act('unshelve', { unshelve: null }, idle('ACTIVE'));
  return steps;
}

/** Is `part` found in `whole` in the same order (other states between allowed)? */
function inOrder(part: readonly string[], whole: readonly string[]): boolean {
  let i = 0;
  for (const s of whole) if (s === part[i]) i++;
  return i === part.length;
}

export function differences(real: Step[], emulated: Step[]): string[] {
  const out: string[] = [];
  real.forEach((r, i) => {
    const e = emulated[i];
    if (!e || e.call !== r.call) {
      out.push(`${r.call}: not made on the sandbox`);
      return;
    }
    if (r.status !== e.status) out.push(`${r.call}: status ${r.status} (real) vs ${e.status} (sandbox)`);
    if (r.message !== e.message) out.push(`${r.call}: "${r.message}" (real) vs "${e.message}" (sandbox)`);
    if (JSON.stringify(r.facts) !== JSON.stringify(e.facts))
      out.push(`${r.call}: ${JSON.stringify(r.facts)} (real) vs ${JSON.stringify(e.facts)} (sandbox)`);
    if (!inOrder(r.seen ?? [], e.seen ?? []))
      out.push(`${r.call}: real ${r.seen?.join(' → ')}, sandbox ${e.seen?.join(' → ')}`);
  });
  return out;
}
