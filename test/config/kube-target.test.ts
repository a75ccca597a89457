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
      server: 'https://10.0.0.1:443',
      serviceAccountDir: '/var/run/secrets/kubernetes.io/serviceaccount',
      source: 'in-cluster',
    });
    const v6 = kubeTarget({}, { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' }, '/sa');
    expect(v6).toMatchObject({ server: 'https://[fd00::1]:6443', serviceAccountDir: '/sa' });
  });

  it('falls back to ~/.kube/config elsewhere', () => {
    expect(kubeTarget({}, {})).toEqual({ source: 'default kubeconfig' });
  });
});
