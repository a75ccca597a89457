// What `drainer demo --keep` prints after the summary: where the sandbox is and what to try.
import { relative } from 'node:path';
import type { Sandbox } from '../sandbox/index.ts';

const shown = (p: string, cwd: string): string => {
  const rel = relative(cwd, p);
  return rel && !rel.startsWith('..') ? rel : p;
};

export function keepText(sb: Sandbox, demoNode: string, cwd: string): string {
  const kc = `kubectl --kubeconfig ${shown(sb.kubeconfigPath ?? '', cwd)}`;
  // drainer's commands need the sandbox's config (its kubeconfig and cloud credentials), not ./config.yaml
  const cfg = `--config-path ${shown(sb.configPath ?? '', cwd)}`;
  const other = sb.scenario.nodes.find((n) => n.name !== demoNode)?.name ?? demoNode;
  const lines = [
    '',
    'The sandbox and one agent per node keep running (Ctrl-C stops them). Try:',
    `  ${kc} get nodes`,
    `  npx drainer plan --node ${other} ${cfg}`,
    `  ${kc} cordon ${other}`,
    `  npx drainer status --watch ${cfg}`,
    `  ${kc} get node ${other} -o jsonpath='{.metadata.annotations.drainer\\.dev/state}'`,
    `  ${kc} get pods -A -o wide --field-selector spec.nodeName=${other}`,
  ];
  if (sb.scenario.kubevirt.installed) lines.push(`  ${kc} get vmi,vmim -A -o wide`);
  lines.push(
    `  ${kc} uncordon ${other}`,
    `  ${kc} get events -n default --sort-by=.lastTimestamp`,
    `Kubernetes API ${sb.kube.url}, Keystone ${sb.openstack.identityUrl}, Nova ${sb.openstack.computeUrl}`,
    '',
  );
  return lines.join('\n');
}
