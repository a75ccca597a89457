import type { CommandModule } from 'yargs';

// Placeholder: the owner of this command replaces this file.
export const command: CommandModule = {
  command: 'demo',
  describe: 'demo (not yet built)',
  handler: () => {
    throw new Error('drainer demo is not built yet');
  },
};
