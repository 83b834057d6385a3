// The last line of defence against processes a test leaves behind: every child registered here is
// SIGKILLed when the process that started it exits (a Jest worker ending, or the main process after
// its global teardown), whatever failed before its own cleanup ran. Specs still stop their children
// in `finally`/`afterAll`; this catches what they could not (a timeout, a throw in a hook).
// Plain CommonJS so the Jest global setup (.mjs), redis-server.js and TypeScript specs share it.
// A Jest worker that dies before its 'exit' event (SIGKILL, a crash) cannot kill its children: each
// is also written down in the run's directory (TEST_RUN_DIR, made by the global setup), and the
// global teardown kills whatever is still listed there, even after a red run.
'use strict';

const { mkdirSync, rmSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const live = new Set();
const listed = process.env.TEST_RUN_DIR ? join(process.env.TEST_RUN_DIR, 'children') : undefined;

function killAll() {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

process.on('exit', killAll);
// Ctrl-C or a SIGTERM ends the process without its 'exit' event: kill the children first, then let
// the signal do what it would have done (the listener is gone once it ran).
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal);
  });
}

/**
 * Registers `child` to be killed when this process exits; returns it.
 * @template {import('node:child_process').ChildProcess} T
 * @param {T} child
 * @returns {T}
 */
function killOnExit(child) {
  if (child.exitCode !== null || child.signalCode !== null) return child;
  live.add(child);
  const entry = listed && child.pid ? join(listed, String(child.pid)) : undefined;
  if (entry) {
    mkdirSync(listed, { recursive: true });
    writeFileSync(entry, '');
  }
  child.once('exit', () => {
    live.delete(child);
    if (entry) rmSync(entry, { force: true });
  });
  return child;
}

module.exports = { killOnExit };
