// `drainer config`: the effective configuration after every layer, secrets shown as [REDACTED].
import yaml from 'js-yaml';
import type { Argv, CommandModule } from 'yargs';
import { redactConfig } from '../config/redact.ts';
import { ExitCode } from '../errors.ts';
import { type GlobalArgs, handle, loadCliConfig } from './context.ts';

interface ConfigArgs extends GlobalArgs {
  output: 'yaml' | 'json';
}

export async function showConfig(argv: ConfigArgs): Promise<number> {
  const config = redactConfig(await loadCliConfig(argv));
  const text =
    argv.output === 'json' ? `${JSON.stringify(config, null, 2)}\n` : yaml.dump(config, { lineWidth: 120 });
  argv.cli.io.stdout.write(text);
  return ExitCode.ok;
}

export const command: CommandModule<GlobalArgs, ConfigArgs> = {
  command: 'config',
  describe: 'print the effective configuration (defaults < file < env < flags), secrets redacted',
  builder: (y: Argv<GlobalArgs>) =>
    y.option('output', {
      alias: 'o',
      choices: ['yaml', 'json'] as const,
      default: 'yaml' as const,
    }),
  handler: handle(showConfig),
};
