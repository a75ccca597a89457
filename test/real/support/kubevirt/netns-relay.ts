// Run by the suite inside virt-api's network namespace (api-netns.ts):
//   node netns-relay.ts <listen host> <listen port> <UNIX socket>
// listens on that namespace's <host>:<port> and pipes each connection to the UNIX socket, where the suite's
// process, in the host's namespace, pipes it on to the API server. Exits on SIGTERM.
import { relay } from './relay.ts';

const [host, port, socket] = process.argv.slice(2);
if (!host || !port || !socket) {
  console.error('usage: netns-relay.ts <listen host> <listen port> <UNIX socket>');
  process.exit(2);
}
const r = await relay({ host, port: Number(port) }, { path: socket });
console.log(`relaying ${host}:${port} to ${socket}`);
process.on('SIGTERM', () => void r.close().then(() => process.exit(0)));
