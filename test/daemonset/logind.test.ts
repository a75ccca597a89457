// The component components/logind (issue 49's install): the agent reaches the host's system bus to hold
// logind's delay lock. Proven on a real logind (test/shutdown): a caller whose uid has no passwd entry on
// the host (the image's 65532) is dropped by dbus-daemon, and without polkit logind refuses a non-root
// uid ("Access denied"), while root with every capability dropped is let in. So the component runs the
// container as uid 0 with no capability, no privilege escalation, a read-only root, and mounts only the
// bus's directory, read-only (connecting to a UNIX socket needs no write to its mount); no hostPID: the
// pod's PID namespace is a child of the host's, so logind sees the agent's pid.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hasKubectl, renderCopy } from './kubectl.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = any;

const withLogind = async (): Promise<Obj> => {
  const base = readFileSync('daemonset/kustomization.yaml', 'utf8');
  const objs = (await renderCopy('daemonset', {
    'daemonset/kustomization.yaml': `${base}\ncomponents:\n  - components/logind\n`,
  })) as Obj[];
  return objs.find((o) => o.kind === 'DaemonSet').spec.template.spec;
};

describe.skipIf(!hasKubectl)('the logind component', () => {
  it("mounts the host's system bus directory read-only where the agent looks for it", async () => {
    const pod = await withLogind();
    const volume = pod.volumes.find((v: Obj) => v.hostPath?.path === '/run/dbus');
    expect(volume.hostPath.type).toBe('DirectoryOrCreate');
    const mount = pod.containers[0].volumeMounts.find((m: Obj) => m.name === volume.name);
    expect(mount).toMatchObject({ mountPath: '/run/dbus', readOnly: true });
  });

  it('runs the container as root with no capability, and asks for nothing else of the host', async () => {
    const pod = await withLogind();
    const sc = pod.containers[0].securityContext;
    expect(sc).toMatchObject({
      runAsUser: 0,
      runAsGroup: 0,
      runAsNonRoot: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(sc.capabilities.add).toBeUndefined();
    expect(sc.privileged).toBeUndefined();
    expect(pod.hostPID).toBeUndefined();
    expect(pod.hostNetwork).toBeUndefined();
  });
});
