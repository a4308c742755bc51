/**
 * `--max-cost USD` (and config.json "maxCostUsd"): a session's model calls may not cost more in all, its resumes
 * in later processes included. The effects: the requests the model server received, and the exit code.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, test } from 'vitest';
import { usageReply } from '../../../test-support/cli-wire.js';
import { runCli } from './support/cli.js';
import { useCliHarness } from './support/harness.js';

const harness = useCliHarness();

/** gpt-4o-mini is priced in the OpenAI catalogue ($0.15 in, $0.60 out per million tokens). */
async function pricedRun(...extra: string[]) {
  await mkdir(harness.sandbox.home, { recursive: true });
  return runCli({
    args: ['--provider', 'openai', '--model', 'gpt-4o-mini', '--base-url', harness.server.baseURL, ...extra],
    sandbox: harness.sandbox,
    env: { OPENAI_API_KEY: 'sk-test-max-cost' },
  });
}

async function writeConfig(config: Record<string, unknown>): Promise<void> {
  await mkdir(harness.sandbox.home, { recursive: true });
  await writeFile(
    path.join(harness.sandbox.home, 'config.json'),
    JSON.stringify({ openaiApi: 'chat', ...config }),
  );
}

test('a call whose worst case passes --max-cost is not sent; the run fails', async () => {
  await writeConfig({});
  // The answer alone could be 8,192 tokens at $0.60 per million: about $0.005, over $0.001.
  const refused = await pricedRun('-p', 'hello', '--max-cost', '0.001');
  expect(harness.server.turnRequests()).toHaveLength(0);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toMatch(/budget/);

  harness.server.reply(usageReply({ prompt: 100, completion: 5 }, 'Hi.'));
  const allowed = await pricedRun('-p', 'hello', '--max-cost', '1');
  expect(allowed.code).toBe(0);
  expect(allowed.stdout).toBe('Hi.\n');
  expect(harness.server.turnRequests()).toHaveLength(1);
});

test("the config file's maxCostUsd counts what earlier processes spent on the session (youyou --continue)", async () => {
  await writeConfig({ maxCostUsd: 0.0065 });
  // 20,000 prompt tokens: $0.003 spent by the first process.
  harness.server.reply(usageReply({ prompt: 20_000, completion: 10 }, 'First.'));
  const first = await pricedRun('-p', 'one');
  expect(first.code).toBe(0);
  expect(harness.server.turnRequests()).toHaveLength(1);

  // $0.003 spent plus a worst case of about $0.005 passes $0.0065: the second process does not send the call.
  const second = await pricedRun('--continue', '-p', 'two');
  expect(second.code).not.toBe(0);
  expect(second.stderr).toMatch(/budget/);
  expect(harness.server.turnRequests()).toHaveLength(1);

  // The flag wins over the file.
  harness.server.reply(usageReply({ prompt: 100, completion: 5 }, 'Third.'));
  const third = await pricedRun('--continue', '-p', 'three', '--max-cost', '1');
  expect(third.code).toBe(0);
  expect(harness.server.turnRequests()).toHaveLength(2);
});

test('a bad --max-cost or maxCostUsd is a usage or config error, before any request', async () => {
  const flag = await pricedRun('-p', 'x', '--max-cost', 'lots');
  expect(flag.code).toBe(2);
  await writeConfig({ maxCostUsd: -1 });
  const file = await pricedRun('-p', 'x');
  expect(file.code).not.toBe(0);
  expect(harness.server.turnRequests()).toHaveLength(0);
});
