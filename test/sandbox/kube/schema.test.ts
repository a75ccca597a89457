// Custom resources are checked against their CRD's openAPIV3Schema as a real API server does:
// unknown fields pruned, then required fields, types, enums and patterns answered with 422 causes.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { drainerCrds } from '../../../src/sandbox/kube/index.ts';
import { startApi, type Api, type Json } from './helpers.ts';

const NM = '/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances';
const LEGACY_NM = '/apis/nodemaintenance.kubevirt.io/v1beta1/nodemaintenances';
const MERGE = 'application/merge-patch+json';
const manifest = path.resolve(
  fileURLToPath(import.meta.url),
  '../../../../daemonset/components/nodemaintenance-crd/crd-nodemaintenance.yaml',
);

const nm = (name: string, spec: Json) => ({
  apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
  kind: 'NodeMaintenance',
  metadata: { name },
  spec,
});

describe('sandbox API server: custom resources against their schema', () => {
  let api: Api;
  beforeEach(async () => {
    api = await startApi();
  });
  afterEach(() => api.server.close());

  it('answers 422 FieldValueRequired for a NodeMaintenance without spec.nodeName, in both groups', async () => {
    for (const collection of [NM, LEGACY_NM]) {
      const res = await api.call('POST', collection, {
        ...nm('bad', { reason: 'x' }),
        apiVersion: undefined,
      });

      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({
        reason: 'Invalid',
        details: {
          name: 'bad',
          kind: 'NodeMaintenance',
          causes: [{ reason: 'FieldValueRequired', field: 'spec.nodeName' }],
        },
      });
      expect(res.body.message).toMatch(
        /NodeMaintenance\.nodemaintenance\.(medik8s|kubevirt)\.io "bad" is invalid: spec\.nodeName: Required value/,
      );
    }
  });

  it('answers 422 FieldValueInvalid for a wrong type and for a value off the pattern, on create and on patch', async () => {
    const wrongType = await api.call('POST', NM, nm('t', { nodeName: 7 }));
    const offPattern = await api.call('POST', NM, nm('p', { nodeName: 'n1', evictionTimeout: 'soon' }));
    await api.call('POST', NM, nm('ok', { nodeName: 'n1', evictionTimeout: '1.5m' }));
    const badStatus = await api.call(
      'PATCH',
      `${NM}/ok/status`,
      { status: { drainProgress: 'half' } },
      MERGE,
    );

    expect(wrongType.status).toBe(422);
    expect(wrongType.body.details.causes).toEqual([
      expect.objectContaining({ reason: 'FieldValueInvalid', field: 'spec.nodeName' }),
    ]);
    expect(offPattern.body.details.causes).toEqual([
      expect.objectContaining({ reason: 'FieldValueInvalid', field: 'spec.evictionTimeout' }),
    ]);
    expect(badStatus.status).toBe(422);
    expect(
      api.server.store.get('nodemaintenances.nodemaintenance.medik8s.io', undefined, 'ok').status,
    ).toBeUndefined();
  });

  it('prunes fields the schema does not declare instead of storing them', async () => {
    await api.call('POST', NM, nm('nm1', { nodeName: 'n1', colour: 'blue' }));
    const res = await api.call(
      'PATCH',
      `${NM}/nm1/status`,
      { status: { phase: 'Running', conditions: [{ type: 'Evacuated', status: 'False' }] } },
      MERGE,
    );

    expect(res.status).toBe(200);
    expect(res.body.spec).toEqual({ nodeName: 'n1' });
    expect(res.body.status).toEqual({ phase: 'Running' });
  });

  it('answers 422 FieldValueNotSupported for a value outside an enum', async () => {
    const crd = {
      metadata: { name: 'widgets.example.dev' },
      spec: {
        group: 'example.dev',
        scope: 'Cluster',
        names: { plural: 'widgets', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', properties: { size: { type: 'string', enum: ['S', 'M'] } } },
                },
              },
            },
          },
        ],
      },
    };
    await api.call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);

    const bad = await api.call('POST', '/apis/example.dev/v1/widgets', {
      metadata: { name: 'w' },
      spec: { size: 'XL' },
    });
    const good = await api.call('POST', '/apis/example.dev/v1/widgets', {
      metadata: { name: 'w' },
      spec: { size: 'M' },
    });

    expect(bad.status).toBe(422);
    expect(bad.body.details.causes).toEqual([
      expect.objectContaining({ reason: 'FieldValueNotSupported', field: 'spec.size' }),
    ]);
    expect(good.status).toBe(201);
  });

  it('serves the same NodeMaintenance schema as the nodemaintenance-crd component, in both groups', () => {
    const file = load(readFileSync(manifest, 'utf8')) as Json;
    const [medik8s, legacy] = drainerCrds() as Json[];
    const served = medik8s.spec.versions[0];

    expect(file.spec.versions[0].schema).toEqual(served.schema);
    expect(legacy.spec.versions[0].schema).toEqual(served.schema);
    expect(file.spec.versions[0].subresources).toEqual(served.subresources);
    expect(file.spec.names).toMatchObject({ ...medik8s.spec.names });
    expect(file.spec.scope).toBe(medik8s.spec.scope);
    expect(served.schema.openAPIV3Schema.properties.spec.required).toEqual(['nodeName']);
  });
});
