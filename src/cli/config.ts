import type { CommandModule } from 'yargs';

// Placeholder: the owner of this command replaces this file.
export const command: CommandModule = {
  command: 'config',
  describe: 'config (not yet built)',
  handler: () => {
    throw new Error('drainer config is not built yet');
  },
};
