// The one wait of run-once and restore next to another agent's Lease: a holder that has gone
// silent is watched for its duration before its Lease is taken. A person sees one line saying so,
// then a countdown every 10 s (no JSON log among the human lines).
import type { CliIo } from './context.ts';

export function leaseWaitLines(
  io: Pick<CliIo, 'stderr'>,
): (holder: string, left: number, renewTime?: string) => void {
  let shown: number | undefined;
  return (holder, left, renewTime) => {
    if (shown === undefined)
      io.stderr.write(
        `node Lease held by ${holder}, silent since ${renewTime ?? 'it was taken'}: waiting ${left} s for it to renew before taking over (Ctrl-C stops; --force acts now)\n`,
      );
    else if (Math.floor(left / 10) < Math.floor(shown / 10)) io.stderr.write(`  ${left} s left\n`);
    else return;
    shown = left;
  };
}
