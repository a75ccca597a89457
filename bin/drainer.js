#!/usr/bin/env node
// The bin entry. Plain JavaScript that old Node versions still parse (no top-level await, no static
// import, nothing newer than Node 12), so an unsupported Node gets one line instead of a stack trace.

// 1. The version gate: node-gate.js, imported first (3.), before anything else is loaded.

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
import('./node-gate.js')
  .then(function () {
    return import('node:fs');
  })
  .then(function (fs) {
    var at = function (p) {
      return new URL(p, import.meta.url);
    };
    var useBuilt = fs.existsSync(at('../dist/cli.js')) && !fs.existsSync(at('../.git'));
    return import((useBuilt ? at('../dist/cli.js') : at('../src/cli.ts')).href);
  })
  .catch(loadFailed);
