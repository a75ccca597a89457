import type { CommandModule } from 'yargs';

// Placeholder: the owner of this command replaces this file.
export const command: CommandModule = {
  command: 'plan',
  describe: 'plan (not yet built)',
  handler: () => {
    throw new Error('drainer plan is not built yet');
  },
};
