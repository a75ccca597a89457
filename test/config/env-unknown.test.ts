// A mistyped DRAINER_* variable is ignored but not silently: one warning naming the closest key.
// What Kubernetes injects for a Service named "drainer", and our test tooling, stays silent.
import { describe, expect, it } from 'vitest';
import { unknownDrainerVars } from '../../src/config/env-unknown.ts';
import { cli } from '../cli/harness.ts';

describe('unknown DRAINER_* variables', () => {
  it('names the closest setting and its key', () => {
    expect(unknownDrainerVars({ DRAINER_NOVA_RETRYS: '3', DRAINER_SERVER_PROT: '9090' })).toEqual([
      'DRAINER_NOVA_RETRYS is not a drainer setting and is ignored (closest: DRAINER_NOVA_RETRIES, the key nova.retries)',
      'DRAINER_SERVER_PROT is not a drainer setting and is ignored (closest: DRAINER_SERVER_PORT, the key server.port)',
    ]);
  });

  it('says nothing of real settings, Service links or test tooling', () => {
    expect(
      unknownDrainerVars({
        DRAINER_NOVA_RETRIES: '3',
        DRAINER_SERVICE_HOST: '10.0.0.1',
        DRAINER_SERVICE_PORT_METRICS: '8080',
        DRAINER_PORT: 'tcp://10.0.0.1:8080',
        DRAINER_PORT_8080_TCP_ADDR: '10.0.0.1',
        DRAINER_METRICS_SERVICE_HOST: '10.0.0.2',
        DRAINER_FT_IMAGE: 'cirros',
        DRAINER_BENCH_TRACE: '1',
        OS_CLOUD: 'x',
      }),
    ).toEqual([]);
  });

  it('a command warns on stderr and still runs', async () => {
    const r = await cli({ env: { DRAINER_NOVA_RETRYS: '3' } })('config');
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      'warning: DRAINER_NOVA_RETRYS is not a drainer setting and is ignored (closest: DRAINER_NOVA_RETRIES, the key nova.retries)\n',
    );
  });
});
