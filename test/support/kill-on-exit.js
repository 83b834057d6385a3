// The last line of defence against processes a test leaves behind: every child registered here is
// SIGKILLed when the process that started it exits (a Jest worker ending, or the main process after
// its global teardown), whatever failed before its own cleanup ran. Specs still stop their children
// in `finally`/`afterAll`; this catches what they could not (a timeout, a throw in a hook).
// Plain CommonJS so the Jest global setup (.mjs), redis-server.js and TypeScript specs share it.
'use strict';

const live = new Set();

process.on('exit', () => {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
});

/**
 * Registers `child` to be killed when this process exits; returns it.
 * @template {import('node:child_process').ChildProcess} T
 * @param {T} child
 * @returns {T}
 */
function killOnExit(child) {
  if (child.exitCode !== null || child.signalCode !== null) return child;
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

module.exports = { killOnExit };
