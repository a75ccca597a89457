/** yargs' own complaints (unknown command or option, bad value): the user's to fix. */
export class UsageError extends Error {}
