import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  contentText,
  hangingReply,
  messagesOf,
  reasoningReply,
  textReply,
  toolCallReply,
  toolResult,
  usageReply,
} from '../../../test-support/cli-wire.js';
import { runCli } from './support/cli.js';
import { send, useTmuxHarness } from './support/harness.js';

const harness = useTmuxHarness();
const { startChat } = harness;

describe('youyou in a terminal', () => {
  test('streams an answer and gives the prompt back', async () => {
    harness.server.reply(textReply('Hello ', 'from the ', 'model.'));
    const chat = await startChat();

    await send(chat, 'hi there');

    const screen = await chat.waitFor(/Hello from the model\.\n› *\n*$/);
    expect(screen).toContain('› hi there');
    const sent = messagesOf(harness.server.turnRequests()[0]!).at(-1);
    expect(sent && contentText(sent)).toBe('hi there');
  });

  test('a dim line after each answer gives its tokens; /usage sums the session, also when it is resumed with --continue', async () => {
    harness.server.reply(
      usageReply({ prompt: 1_500, completion: 40, cached: 1_024 }, 'First.'),
      usageReply({ prompt: 2_500, completion: 60, reasoning: 12 }, 'Second.'),
    );
    const chat = await startChat();

    await send(chat, 'one');
    await chat.waitFor(/First\.\n1,500 in \(1,024 cached\) · 40 out\n› *\n*$/);
    await send(chat, 'two');
    await chat.waitFor(/Second\.\n2,500 in · 60 out \(12 reasoning\)\n› *\n*$/);
    await send(chat, '/usage');
    let screen = await chat.waitFor(/reasoning +12\n.*cost.*\n› *\n*$/);
    expect(screen).toMatch(/model calls +2\n/);
    expect(screen).toMatch(/input tokens +4,000\n/);
    expect(screen).toMatch(/cached +1,024\n/);
    expect(screen).toMatch(/output tokens +100\n/);
    // llama3.2 has no price: the cost is unknown, not $0.
    expect(screen).toMatch(/cost +unknown/);

    // The totals come back with the session.
    await send(chat, '/new');
    await chat.waitFor(/New session\.\n› *\n*$/);
    await send(chat, '/usage');
    await chat.waitFor(/No model usage in this session yet\.\n› *\n*$/);
    await chat.keys('C-d');
    await chat.waitForExit();
    await chat.kill();
    const resumed = await startChat('--continue');
    await send(resumed, '/usage');
    screen = await resumed.waitFor(/reasoning +12\n.*cost.*\n› *\n*$/);
    expect(screen).toMatch(/input tokens +4,000\n/);
  });

  test('asks before a mutating tool runs; y lets it run', async () => {
    harness.server.reply(
      toolCallReply({ id: 'call_w', name: 'write_file', arguments: { path: 'note.txt', content: 'hi\n' } }),
      (request) => textReply(toolResult(request, 'call_w')?.includes('denied') ? 'Denied.' : 'Written.'),
    );
    const chat = await startChat();

    await send(chat, 'write a note');
    await chat.waitFor(/Allow write_file note\.txt[\s\S]*y = yes/);
    expect(existsSync(path.join(harness.sandbox.workspace, 'note.txt'))).toBe(false);
    await chat.type('y');

    const screen = await chat.waitFor(/Written\.\n› *\n*$/);
    expect(screen).toMatch(/✓ write_file note\.txt/);
    expect(await readFile(path.join(harness.sandbox.workspace, 'note.txt'), 'utf8')).toBe('hi\n');
  });

  test('n denies the tool and the model is told; a then Enter always allows the tool for the session', async () => {
    harness.server.reply(
      toolCallReply({ id: 'call_1', name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }),
      textReply('Not written.'),
      toolCallReply({ id: 'call_2', name: 'write_file', arguments: { path: 'b.txt', content: 'b' } }),
      toolCallReply({ id: 'call_3', name: 'write_file', arguments: { path: 'c.txt', content: 'c' } }),
      textReply('Both written.'),
    );
    const chat = await startChat();

    await send(chat, 'write a');
    await chat.waitFor(/Allow write_file a\.txt[\s\S]*y = yes/);
    await chat.type('n');
    await chat.waitFor(/Not written\.\n› *\n*$/);
    expect(toolResult(harness.server.turnRequests()[1]!, 'call_1')).toContain(
      'the user denied running write_file',
    );
    expect(existsSync(path.join(harness.sandbox.workspace, 'a.txt'))).toBe(false);

    await send(chat, 'write b and c');
    await chat.waitFor(/Allow write_file b\.txt[\s\S]*y = yes/);
    await chat.type('a');
    await chat.waitFor('1 (or Enter) = every write_file call');
    await chat.keys('Enter');
    const screen = await chat.waitFor(/Both written\.\n› *\n*$/);
    expect(screen).not.toContain('Allow write_file c.txt');
    expect(existsSync(path.join(harness.sandbox.workspace, 'c.txt'))).toBe(true);
  });

  test('Ctrl-C cancels a turn during a slow stream and the prompt comes back', async () => {
    harness.server.reply(hangingReply('partial ', 'answer'));
    const chat = await startChat();

    await send(chat, 'take your time');
    await chat.waitFor('partial answer');
    await chat.keys('C-c');

    await chat.waitFor(/cancelled\n› *\n*$/);
    await harness.server.wire.clientClosed();
    harness.server.reply(textReply('Still here.'));
    await send(chat, 'are you there?');
    await chat.waitFor(/Still here\.\n› *\n*$/);
    // The interrupted answer stayed in the context, marked as interrupted.
    const history = messagesOf(harness.server.turnRequests()[1]!).map(contentText).join('\n');
    expect(history).toContain('partial answer');
  });

  test('Ctrl-D at an empty prompt exits and closes the session, which extracts memories', async () => {
    harness.server.reply(textReply('Noted.'));
    const chat = await startChat();
    await send(chat, 'I prefer tabs');
    await chat.waitFor(/Noted\.\n› *\n*$/);

    await chat.keys('C-d');

    await chat.waitForExit();
    expect(harness.server.memoryRequests()).toHaveLength(1);
    expect(await readFile(path.join(harness.sandbox.home, 'history'), 'utf8')).toBe('I prefer tabs\n');
  });

  test('Ctrl-C twice at the prompt exits; the history comes back with ↑ in the next run', async () => {
    harness.server.reply(textReply('One.'));
    const first = await startChat();
    await send(first, 'first question');
    await first.waitFor(/One\.\n› *\n*$/);
    await first.keys('C-c');
    await first.waitFor('Ctrl-C again');
    await first.keys('C-c');
    await first.waitForExit();
    await first.kill();

    const second = await startChat();
    await second.keys('Up');
    await second.waitFor(/› first question *\n*$/);
  });

  test('reasoning collapses to one line; /reasoning shows it in full', async () => {
    harness.server.reply(
      reasoningReply(['Weighing ', 'the options ', 'carefully.'], ['Answer one.']),
      reasoningReply(['Second ', 'thoughts here.'], ['Answer two.']),
    );
    const chat = await startChat();

    await send(chat, 'first');
    let screen = await chat.waitFor(/Answer one\.\n› *\n*$/);
    expect(screen).toContain('thought for 4 words');
    expect(screen).not.toContain('Weighing the options');

    await send(chat, '/reasoning');
    await chat.waitFor('Reasoning is shown in full');
    await send(chat, 'second');
    screen = await chat.waitFor(/Answer two\.\n› *\n*$/);
    expect(screen).toContain('Second thoughts here.');
  });

  test('--continue resumes the latest session: its context is shown and sent again', async () => {
    harness.server.reply(textReply('The number is noted.'));
    const earlier = await runCli({
      args: ['-p', 'remember 42', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    expect(earlier.code).toBe(0);

    harness.server.reply(textReply('It was 42.'));
    const chat = await startChat('--continue');
    await chat.waitFor('Resumed session');
    await send(chat, 'which number?');
    await chat.waitFor(/It was 42\.\n› *\n*$/);

    const texts = messagesOf(harness.server.turnRequests()[1]!).map(contentText);
    expect(texts).toContain('remember 42');
    expect(texts).toContain('The number is noted.');
    expect(texts.at(-1)).toBe('which number?');
  });

  test('/compact INSTRUCTIONS summarises now: the instructions reach the compaction request, the next request holds the summary', async () => {
    harness.server.reply(
      textReply('Hello, noted.'),
      textReply('SUMMARY-7731: the user said hello.'),
      textReply('Still here.'),
    );
    const chat = await startChat();
    await send(chat, '/compact');
    await chat.waitFor('Nothing to compact yet');
    await send(chat, 'hello there');
    await chat.waitFor(/Hello, noted\.\n› *\n*$/);

    await send(chat, '/compact keep the word pineapple');
    await chat.waitFor('Context compacted');
    await send(chat, 'and now?');
    await chat.waitFor(/Still here\.\n› *\n*$/);

    const [, compaction, next] = harness.server.turnRequests();
    const system = messagesOf(compaction!).find(
      (message) => message.role === 'system' || message.role === 'developer',
    );
    expect(contentText(system!)).toContain('keep the word pineapple');
    expect(messagesOf(compaction!).map(contentText).join('\n')).toContain('hello there');
    const texts = messagesOf(next!).map(contentText);
    expect(texts.some((text) => text.includes('SUMMARY-7731'))).toBe(true);
    expect(texts.at(-1)).toBe('and now?');
  });

  test('/skills, /new, /sessions and /resume', async () => {
    const folder = path.join(harness.sandbox.workspace, '.youyou', 'skills', 'review');
    await mkdir(folder, { recursive: true });
    await writeFile(
      path.join(folder, 'SKILL.md'),
      '---\nname: review\ndescription: Review the diff.\n---\nReview it.\n',
    );
    harness.server.reply(
      textReply('First answer.'),
      textReply('Second answer.'),
      textReply('Back in the first.'),
    );
    const chat = await startChat();

    await send(chat, '/skills');
    await chat.waitFor('/review  Review the diff.');
    await send(chat, 'about apples');
    await chat.waitFor(/First answer\.\n› *\n*$/);
    await send(chat, '/new');
    await chat.waitFor('New session.');
    await send(chat, 'about pears');
    await chat.waitFor(/Second answer\.\n› *\n*$/);
    await send(chat, '/sessions');
    const listing = await chat.waitFor(/about apples[\s\S]*› *\n*$/);
    const apples = /([0-9a-f]{8}) .* about apples/.exec(listing)?.[1];
    expect(listing).toMatch(/\* [0-9a-f]{8} .* about pears/);
    expect(apples).toBeDefined();

    await send(chat, `/resume ${apples}`);
    await chat.waitFor(`Resumed session ${apples}`);
    await send(chat, 'and now?');
    await chat.waitFor(/Back in the first\.\n› *\n*$/);
    const texts = messagesOf(harness.server.turnRequests()[2]!).map(contentText);
    expect(texts).toContain('about apples');
    expect(texts).not.toContain('about pears');
  });
});
