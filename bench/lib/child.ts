// Runs a command as a child process (kubectl in the drain and gate scenarios), collecting its output.
import { spawn } from 'node:child_process';

export function run(
  cmd: string,
  args: string[],
  cwd: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd } });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}
