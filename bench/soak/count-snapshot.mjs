/**
 * `node count-snapshot.mjs FILE NAME...`: prints, as JSON, how many objects of each constructor NAME the V8
 * heap snapshot FILE holds. Run by the soaks in a child process, so the parse does not grow the measured one.
 */
import { readFileSync } from 'node:fs';

const [file, ...names] = process.argv.slice(2);
const snapshot = JSON.parse(readFileSync(file, 'utf8'));
const fields = snapshot.snapshot.meta.node_fields;
const typeNames = snapshot.snapshot.meta.node_types[0];
const width = fields.length;
const typeAt = fields.indexOf('type');
const nameAt = fields.indexOf('name');
const counts = Object.fromEntries(names.map((name) => [name, 0]));
const { nodes, strings } = snapshot;
for (let at = 0; at < nodes.length; at += width) {
  if (typeNames[nodes[at + typeAt]] !== 'object') continue;
  const name = strings[nodes[at + nameAt]];
  if (Object.hasOwn(counts, name)) counts[name]++;
}
process.stdout.write(JSON.stringify(counts));
