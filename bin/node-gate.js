// The Node version gate: plain JavaScript that old Node versions still parse, so an unsupported Node
// gets one line instead of a stack trace. Loaded first by bin/drainer.js, and by `npm test`
// (`node --import`) before any TypeScript. DRAINER_TEST_NODE_VERSION lets a test pose as an old Node.
var MIN = [22, 18];
// eslint-disable-next-line no-restricted-properties -- a test seam, read before src/config can load
var version = process.env.DRAINER_TEST_NODE_VERSION || process.version;
var parts = /^v?(\d+)\.(\d+)/.exec(version);
var major = parts ? Number(parts[1]) : 0;
var minor = parts ? Number(parts[2]) : 0;
// Type stripping is on by default from 22.18 in the 22 line and from 23.6 in the 23 line.
var tooOld = major < MIN[0] || (major === MIN[0] && minor < MIN[1]) || (major === 23 && minor < 6);
if (tooOld) {
  process.stderr.write(
    'drainer needs Node.js \u2265 ' + MIN.join('.') + ' (24 LTS recommended); this is ' + version + '\n',
  );
  process.exit(1);
}
