import { describe, expect, it } from 'vitest';
import { kubeTarget } from '../../src/config/kube-target.ts';

describe('Kubernetes credentials choice', () => {
  it('uses the configured kubeconfig first, even inside a Pod', () => {
    expect(kubeTarget({ kubeconfig: '/k/config' }, { KUBERNETES_SERVICE_HOST: '10.0.0.1' })).toEqual({
      kubeconfigPath: '/k/config',
      source: 'kubeconfig',
    });
  });

  it('uses the ServiceAccount when running in a Pod without a kubeconfig', () => {
    expect(kubeTarget({}, { KUBERNETES_SERVICE_HOST: '10.0.0.1' })).toEqual({
      inCluster: true,
      source: 'in-cluster',
    });
  });

  it('falls back to ~/.kube/config elsewhere', () => {
    expect(kubeTarget({}, {})).toEqual({ source: 'default kubeconfig' });
  });
});
