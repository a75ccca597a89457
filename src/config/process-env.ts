// The one door to the process environment for code outside src/config (the CLI passes it down).
export const processEnv = (): NodeJS.ProcessEnv => process.env;
