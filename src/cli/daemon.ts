import type { CommandModule } from 'yargs';

// Placeholder: the owner of this command replaces this file.
export const command: CommandModule = {
  command: 'daemon',
  describe: 'daemon (not yet built)',
  handler: () => {
    throw new Error('drainer daemon is not built yet');
  },
};
