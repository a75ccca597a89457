import type { CommandModule } from 'yargs';

// Placeholder: the owner of this command replaces this file.
export const command: CommandModule = {
  command: 'sandbox',
  describe: 'sandbox (not yet built)',
  handler: () => {
    throw new Error('drainer sandbox is not built yet');
  },
};
