// The few Kubernetes writes the bench makes itself, over HTTP like any client.

/** Sets or clears spec.unschedulable with a merge patch (what `kubectl cordon` sends). */
export async function setUnschedulable(apiUrl: string, node: string, on: boolean): Promise<void> {
  const res = await fetch(`${apiUrl}/api/v1/nodes/${encodeURIComponent(node)}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ spec: { unschedulable: on ? true : null } }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`bench: PATCH node ${node} answered ${res.status}: ${text.slice(0, 200)}`);
}
