// The end of `npm test`: the checks this machine could not run, and the one command that enables
// each. Specs leave a note per skipped prerequisite through test/support/prerequisites.ts in the
// folder the global setup made (TEST_NOT_RUN_DIR); the global teardown prints them, after Jest's
// summary, and removes the folder.
'use strict';
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

/** The "Not run here" lines, or none when every check ran. */
function notRunReport(dir) {
  let files = [];
  try {
    files = readdirSync(dir).filter((file) => file.endsWith('.json'));
  } catch {
    return []; // no folder: nothing was skipped
  }
  const byName = new Map();
  for (const file of files) {
    const note = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const entry = byName.get(note.name) ?? { ...note, specs: [] };
    entry.specs.push(note.spec);
    byName.set(note.name, entry);
  }
  if (byName.size === 0) return [];
  const lines = ['', `Not run here (${byName.size} check${byName.size === 1 ? '' : 's'}):`];
  for (const { check, why, enable, specs } of byName.values()) {
    lines.push(`  - ${check}: ${why}`);
    lines.push(`    skipped in ${specs.length} spec file(s): ${specs.sort().join(', ')}`);
    lines.push(`    enable with: ${enable}`);
  }
  lines.push(
    'CI runs them all: .ci/run installs what they need and sets REQUIRE_ALL_CHECKS=1, under which a missing',
    'prerequisite fails the run.',
    '',
  );
  return lines;
}

module.exports = { notRunReport };
