import type { CommandModule } from 'yargs';

// Placeholder: the owner of this command replaces this file.
export const command: CommandModule = {
  command: 'run-once',
  describe: 'run-once (not yet built)',
  handler: () => {
    throw new Error('drainer run-once is not built yet');
  },
};
