#!/usr/bin/env node
import { run } from './main.js';

const code = await run({
  argv: process.argv.slice(2),
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
// Exit once the output is written: idle keep-alive sockets of the HTTP clients must not hold the process open.
process.stdout.write('', () => process.exit(code));
