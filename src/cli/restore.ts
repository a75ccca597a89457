import type { CommandModule } from 'yargs';

// Placeholder: the owner of this command replaces this file.
export const command: CommandModule = {
  command: 'restore',
  describe: 'restore (not yet built)',
  handler: () => {
    throw new Error('drainer restore is not built yet');
  },
};
