// A request with no answer names the API server's address and the system's reason, found down the
// cause chain, never just the wrapper's name ("no answer: TypeError" for a kubeconfig at port 1).
import { describe, expect, it } from 'vitest';
import { connectionError } from '../../src/kube/errors.ts';

const coded = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('connectionError', () => {
  it("names the address and fetch's own reason when no code is given (port 1: bad port)", () => {
    const err = new TypeError('fetch failed', { cause: new Error('bad port') });
    expect(connectionError(err, 'GET', '/api/v1/nodes', undefined, 'http://127.0.0.1:1').message).toBe(
      'kubernetes GET /api/v1/nodes at http://127.0.0.1:1: no answer: bad port (hint: check the server in the kubeconfig (kubeconfig, KUBECONFIG) and the network)',
    );
  });

  it('finds the system code however deep it is wrapped', () => {
    const err = new TypeError('fetch failed', {
      cause: new Error('connect failed', {
        cause: coded('connect ECONNREFUSED 127.0.0.1:3', 'ECONNREFUSED'),
      }),
    });
    expect(connectionError(err, 'GET', '/api/v1/nodes', undefined, 'http://127.0.0.1:3').message).toMatch(
      /^kubernetes GET \/api\/v1\/nodes at http:\/\/127\.0\.0\.1:3: connection refused \(hint: /,
    );
  });

  it('a code on the error itself (node:https) wins', () => {
    const err = coded('unable to verify the first certificate', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(connectionError(err, 'GET', '/version').message).toMatch(
      /^kubernetes GET \/version: TLS failed: UNABLE_TO_VERIFY_LEAF_SIGNATURE/,
    );
  });
});
