// Nova's stranded service: the node's nova-compute disabled with drainer's reason and no record.
// Enabled when the node is in service (not in a dry run); a node that is no hypervisor has none.
import { describe, expect, it } from 'vitest';
import { HostMappingError } from '../../../src/errors.ts';
import { createLogger } from '../../../src/observability/logger.ts';
import { novaStranded } from '../../../src/plugins/nova/stranded.ts';
import type { NovaService } from '../../../src/plugins/nova/types.ts';

const NOVA = { disabledReasonPrefix: 'drainer:', hostMapping: {} };
const RESTART = { node: 'host-a', sleep: async () => {}, now: () => 0, pollMs: 1000 };

function compute(service: Partial<NovaService> | undefined) {
  const enabled: string[] = [];
  return {
    enabled,
    init: async () => ({ endpoint: 'http://nova', microversion: '2.90' }),
    listServices: async (host: string): Promise<NovaService[]> =>
      service ? [{ id: 7, host, binary: 'nova-compute', status: 'enabled', ...service }] : [],
    listHypervisors: async () => {
      if (!service) throw new HostMappingError('node "n" matches no nova-compute service', []);
      return [];
    },
    enableService: async (svc: NovaService) => {
      enabled.push(svc.host);
    },
    listServersOnHost: async () => [],
    getServer: async () => Promise.reject(new Error('no server')),
    startServer: async () => undefined,
    listInstanceActions: async () => [],
    setServerMetadataItem: async () => {},
    deleteServerMetadataItem: async () => {},
  };
}

const opts = (inService: boolean, dryRun = false) => ({
  signal: new AbortController().signal,
  inService,
  dryRun,
  log: createLogger({ level: 'silent' }),
});

describe('novaStranded', () => {
  const ours = { status: 'disabled', disabled_reason: 'drainer: cordon 2026-11-25T09:00:00Z' } as const;
  it.each([
    ['in service: enabled again', ours, opts(true), true, ['host-a']],
    ['not in service: left, reported', ours, opts(false), false, []],
    ['dry run: reported, not enabled', ours, opts(true, true), false, []],
  ])('disabled by drainer, %s', async (_what, svc, o, restored, enabled) => {
    const c = compute(svc);
    const found = await novaStranded(c, NOVA, { name: 'host-a' }, o, RESTART);
    expect(found).toEqual({ what: 'nova-compute service on host-a', reason: svc.disabled_reason, restored });
    expect(c.enabled).toEqual(enabled);
  });

  it.each([
    ['disabled by someone else', { status: 'disabled', disabled_reason: 'rack swap' }],
    ['enabled', { status: 'enabled' }],
    ['a node that is no hypervisor', undefined],
  ] as const)('finds nothing when %s', async (_what, svc) => {
    const c = compute(svc);
    expect(await novaStranded(c, NOVA, { name: 'host-a' }, opts(true), RESTART)).toBeUndefined();
    expect(c.enabled).toEqual([]);
  });
});
