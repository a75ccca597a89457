// The real suite's check for unexpected 4xx in the agent's log (test/real/support/agent-log.ts),
// against log lines as drainer writes them: pino JSON with the error nested, and plain text.
import { describe, expect, it } from 'vitest';
import { fourXxIn, unexpected4xx, unexpected4xxText } from '../real/support/agent-log.ts';

const pino = (msg: string, errMessage: string) =>
  JSON.stringify({ level: 40, msg, err: { type: 'ApiError', message: errMessage, code: 'API' } });

const lines = [
  pino(
    'could not look for the drain gates of deleted nodes',
    'kubernetes PUT /apis/coordination.k8s.io/v1/namespaces/drainer/leases/drainer-gate-sweep: 400 BadRequest: Lease in version "v1" cannot be handled as a Lease',
  ),
  pino(
    'x',
    'kubernetes PUT /apis/coordination.k8s.io/v1/namespaces/drainer/leases/drainer-gate-sweep: 400 BadRequest',
  ),
  pino(
    'lost a race',
    'kubernetes PUT /apis/coordination.k8s.io/v1/namespaces/drainer/leases/drainer-evacuation-0: 409 Conflict',
  ),
  'nova POST /servers/abc/action: 409 Conflict: Cannot os-migrateLive while it is in task_state migrating',
  pino('fine', 'kubernetes GET /api/v1/nodes/n1: 500 InternalError'),
  JSON.stringify({ level: 30, msg: 'holding the node Lease', lease: 'drainer-node-n1' }),
];

describe("the real suite's 4xx check of the agent's log", () => {
  it('finds each distinct 4xx answer once, whatever API, and no 5xx or plain line', () => {
    expect(fourXxIn(lines).map((s) => `${s.api} ${s.method} ${s.path} ${s.code}`)).toEqual([
      'kubernetes PUT /apis/coordination.k8s.io/v1/namespaces/drainer/leases/drainer-gate-sweep 400',
      'kubernetes PUT /apis/coordination.k8s.io/v1/namespaces/drainer/leases/drainer-evacuation-0 409',
      'nova POST /servers/abc/action 409',
    ]);
  });

  it('fails on what the case did not declare, by code and path', () => {
    const left = unexpected4xx(fourXxIn(lines), [
      { code: 409, path: /\/leases\//, why: 'two agents race for a slot' },
      { code: 409, path: /^\/servers\//, why: 'an owner migrates the server too' },
    ]);

    expect(left.map((s) => s.code)).toEqual([400]);
    expect(unexpected4xxText(left)).toMatch(
      /^the agent's log holds 1 4xx answer\(s\) this case did not expect/,
    );
    expect(unexpected4xxText([])).toBeUndefined();
  });
});
