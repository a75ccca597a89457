// The node-restriction component's ValidatingAdmissionPolicy, evaluated as the API server would: a
// request that matches every matchCondition is admitted only if every validation is true (the
// variables computed first). The CEL runs in @bufbuild/cel against sample admission requests.
import { readFileSync } from 'node:fs';
import { run } from '@bufbuild/cel';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';

interface Expression {
  name?: string;
  expression: string;
  messageExpression?: string;
  message?: string;
}
interface Policy {
  kind: string;
  spec: {
    matchConstraints: { resourceRules: { resources: string[]; operations: string[] }[] };
    matchConditions: Expression[];
    variables: Expression[];
    validations: Expression[];
    policyName?: string;
    validationActions?: string[];
  };
  metadata: { name: string };
}

const docs = yaml.loadAll(
  readFileSync('daemonset/components/node-restriction/policy.yaml', 'utf8'),
) as Policy[];
const policy = docs.find((d) => d.kind === 'ValidatingAdmissionPolicy') as Policy;
const binding = docs.find((d) => d.kind === 'ValidatingAdmissionPolicyBinding') as Policy;

/** JSON as CEL sees it: objects are maps. */
const toCel = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(toCel)
    : v !== null && typeof v === 'object'
      ? new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)]))
      : v;

const DRAINER = 'system:serviceaccount:drainer:drainer';
const NODE_CLAIM = 'authentication.kubernetes.io/node-name';

interface Sample {
  user: string;
  ownNode?: string;
  operation: 'UPDATE' | 'DELETE';
  resource: 'nodes' | 'pods';
  old: object;
}

type Verdict = 'allowed' | 'untouched' | { denied: string };

function admit(s: Sample): Verdict {
  const rule = policy.spec.matchConstraints.resourceRules.find(
    (r) => r.resources.includes(s.resource) && r.operations.includes(s.operation),
  );
  if (!rule) return 'untouched';
  const request = toCel({
    operation: s.operation,
    resource: { group: '', version: 'v1', resource: s.resource },
    subResource: '',
    userInfo: { username: s.user, extra: s.ownNode ? { [NODE_CLAIM]: [s.ownNode] } : {} },
  });
  const bindings: Record<string, unknown> = { request, oldObject: toCel(s.old), object: toCel(s.old) };
  if (!policy.spec.matchConditions.every((c) => run(c.expression, bindings as never) === true))
    return 'untouched';
  const variables = new Map<string, unknown>();
  for (const v of policy.spec.variables)
    variables.set(v.name ?? '', run(v.expression, { ...bindings, variables } as never));
  const all = { ...bindings, variables };
  for (const v of policy.spec.validations) {
    if (run(v.expression, all as never) === true) continue;
    const text = v.messageExpression ? run(v.messageExpression, all as never) : v.message;
    const message = typeof text === 'string' ? text : '';
    return { denied: message.replace(/\s+/g, ' ').trim() };
  }
  return 'allowed';
}

const node = (name: string) => ({ metadata: { name }, spec: { unschedulable: true } });
const pod = (name: string, nodeName?: string) => ({
  metadata: { name, namespace: 'vms' },
  spec: nodeName ? { nodeName } : {},
});

/** drainer's agent on node-1 (its token's node claim) writing the Node `target`. */
const agentPatches = (target: string) =>
  admit({ user: DRAINER, ownNode: 'node-1', operation: 'UPDATE', resource: 'nodes', old: node(target) });

describe('node-restriction: ValidatingAdmissionPolicy (CEL)', () => {
  it('is bound to the policy with Deny', () => {
    expect(binding.spec.policyName).toBe(policy.metadata.name);
    expect(binding.spec.validationActions).toEqual(['Deny']);
  });

  it("lets drainer's agent update or patch its own Node", () => {
    expect(agentPatches('node-1')).toBe('allowed');
  });

  it('denies it another Node, naming both', () => {
    expect(agentPatches('node-2')).toEqual({
      denied: 'drainer on node node-1 may change only its own Node, not node-2',
    });
  });

  it('lets it delete a pod on its own node, and denies one on another node or unscheduled', () => {
    const del = (p: object) =>
      admit({ user: DRAINER, ownNode: 'node-1', operation: 'DELETE', resource: 'pods', old: p });
    expect(del(pod('virt-launcher-a', 'node-1'))).toBe('allowed');
    expect(del(pod('virt-launcher-b', 'node-2'))).toEqual({
      denied: 'drainer on node node-1 may delete only pods on its own node',
    });
    expect(del(pod('pending'))).toMatchObject({
      denied: expect.stringContaining('only pods on its own node'),
    });
  });

  it('denies every such write to a token without the node claim (a kubeconfig, an older cluster)', () => {
    const verdict = admit({ user: DRAINER, operation: 'UPDATE', resource: 'nodes', old: node('node-1') });
    expect(verdict).toMatchObject({ denied: expect.stringContaining('names no node') });
  });

  it('leaves other users alone: an operator cordons any node, a controller deletes any pod', () => {
    expect(
      admit({ user: 'kubernetes-admin', operation: 'UPDATE', resource: 'nodes', old: node('node-2') }),
    ).toBe('untouched');
    expect(
      admit({
        user: 'system:serviceaccount:kube-system:replicaset-controller',
        operation: 'DELETE',
        resource: 'pods',
        old: pod('web-1', 'node-2'),
      }),
    ).toBe('untouched');
    // another agent's ServiceAccount in another namespace is not drainer's
    expect(
      admit({
        user: 'system:serviceaccount:other:drainer',
        ownNode: 'node-1',
        operation: 'UPDATE',
        resource: 'nodes',
        old: node('node-2'),
      }),
    ).toBe('untouched');
  });
});
