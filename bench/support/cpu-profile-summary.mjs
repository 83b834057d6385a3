// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function, the share of garbage
// collection, idle time and the program's own, and self time by package. Usage:
//   node bench/support/cpu-profile-summary.mjs <file.cpuprofile> [top=25]
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: cpu-profile-summary.mjs <file.cpuprofile> [top]');
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8'));

const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMicros = new Map();
// timeDeltas[i] is the time before samples[i]: a sample lasts until the next one (as DevTools
// counts; the first delta is the wait before profiling began, charged to nothing).
for (let i = 0; i < profile.samples.length - 1; i++) {
  const id = profile.samples[i];
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + profile.timeDeltas[i + 1]);
}
const total = [...selfMicros.values()].reduce((sum, value) => sum + value, 0);

const byFunction = new Map();
const byPackage = new Map();
let idle = 0;
let gc = 0;
for (const [id, micros] of selfMicros) {
  const { functionName, url, lineNumber } = nodes.get(id).callFrame;
  if (functionName === '(idle)') idle += micros;
  if (functionName === '(garbage collector)') gc += micros;
  const where = url ? `${shorten(url)}:${lineNumber + 1}` : '';
  const name = `${functionName || '(anonymous)'} ${where}`.trim();
  byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  const pkg = packageOf(url, functionName);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros);
}

const busy = total - idle;
const pct = (value, of = busy) => `${((value / of) * 100).toFixed(1)}%`;
console.log(
  `profile: ${(total / 1e6).toFixed(2)} s sampled, ${pct(idle, total)} idle; shares below are of the ${(busy / 1e6).toFixed(2)} s busy`,
);
console.log(`garbage collection: ${pct(gc)} of busy time`);
console.log('\nself time by package:');
for (const [name, micros] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
  if (name !== '(idle)') console.log(`  ${pct(micros).padStart(6)}  ${name}`);
}
console.log(`\ntop ${top} functions by self time:`);
for (const [name, micros] of [...byFunction]
  .sort((a, b) => b[1] - a[1])
  .filter(([n]) => !n.startsWith('(idle)'))
  .slice(0, top)) {
  console.log(`  ${pct(micros).padStart(6)}  ${name}`);
}

function shorten(url) {
  const path = url.replace(/^file:\/\//, '');
  return path.includes('/node_modules/')
    ? path.replace(/^.*\/node_modules\//, '')
    : path.replace(/^.*\/(lib|bench|test)\//, '$1/');
}

function packageOf(url, functionName) {
  if (!url) return functionName.startsWith('(') ? functionName : '(native/V8 builtins)';
  if (url.startsWith('node:')) return 'node: (core modules)';
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match) return match[1];
  const own = /\/(lib|bench|test)\//.exec(url);
  return own ? `this package: ${own[1]}/` : url;
}

// Who calls the heaviest functions (self time by caller, two frames up), for the top 8.
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const label = (id) => {
  const { functionName, url, lineNumber } = nodes.get(id).callFrame;
  return `${functionName || '(anonymous)'}${url ? ` ${shorten(url)}:${lineNumber + 1}` : ''}`;
};
console.log('\ncallers of the heaviest (self time, by caller > caller of caller):');
const heaviest = [...byFunction]
  .sort((a, b) => b[1] - a[1])
  .filter(([n]) => !n.startsWith('('))
  .slice(0, 8)
  .map(([n]) => n);
for (const name of heaviest) {
  const callers = new Map();
  for (const [id, micros] of selfMicros) {
    if (label(id) !== name) continue;
    const parent = parentOf.get(id);
    const grand = parent && parentOf.get(parent);
    const key = `${parent ? label(parent) : '-'} < ${grand ? label(grand) : '-'}`;
    callers.set(key, (callers.get(key) ?? 0) + micros);
  }
  console.log(`  ${name}`);
  for (const [key, micros] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 3)) {
    console.log(`    ${pct(micros).padStart(6)}  ${key}`);
  }
}
