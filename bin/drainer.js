#!/usr/bin/env node
// The bin entry. Plain JavaScript that old Node versions still parse (no top-level await, no static
// import, nothing newer than Node 12), so an unsupported Node gets one line instead of a stack trace.

// 1. The version gate, before anything is loaded. DRAINER_TEST_NODE_VERSION lets a test pose as an old Node.
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

// 2. A failure while loading (a missing dependency, a broken install) is one line with a hint; the
// stack only with --log-level debug. Errors of a running command are handled in src/cli/main.ts.
function loadFailed(err) {
  var argv = process.argv.join(' ');
  var debug = /--log-level[= ](debug|trace)\b/.test(argv);
  var cause = err && err.cause ? ' (cause: ' + (err.cause.message || err.cause) + ')' : '';
  process.stderr.write(
    'drainer could not start: ' +
      ((err && err.message) || err) +
      cause +
      '\n' +
      (debug
        ? String((err && err.stack) || '') + '\n'
        : 'hint: run "npm ci" in the drainer directory; add --log-level debug for the stack\n'),
  );
  process.exit(1);
}

// 3. Load the CLI: the bundle (npm run build) in an installed package and the image; in a git checkout
// the TypeScript source (Node strips types), so a dist/ built earlier never shadows newer code there.
import('node:fs')
  .then(function (fs) {
    var at = function (p) {
      return new URL(p, import.meta.url);
    };
    var useBuilt = fs.existsSync(at('../dist/cli.js')) && !fs.existsSync(at('../.git'));
    return import((useBuilt ? at('../dist/cli.js') : at('../src/cli.ts')).href);
  })
  .catch(loadFailed);
