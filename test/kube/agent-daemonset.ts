// drainer's agent DaemonSet as the stories create it: the gate's PDB is owned by it, and with the
// runbook's affinity it places no agent pod on a node labelled drainer.dev/agent=disabled.
/** The agent DaemonSet `drainer`; `podSpec` adds to its pod template's spec. */
export const agentDaemonSet = (podSpec: Record<string, unknown> = {}) => ({
  metadata: { name: 'drainer' },
  spec: {
    selector: { matchLabels: { app: 'drainer' } },
    template: {
      metadata: { labels: { app: 'drainer' } },
      spec: { containers: [{ name: 'a', image: 'x' }], ...podSpec },
    },
  },
});

/** The agent DaemonSet with the runbook's affinity (no agent on a node labelled drainer.dev/agent=disabled). */
export const runbookDaemonSet = (podSpec: Record<string, unknown> = {}) =>
  agentDaemonSet({
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'drainer.dev/agent', operator: 'NotIn', values: ['disabled'] }] },
          ],
        },
      },
    },
    ...podSpec,
  });
