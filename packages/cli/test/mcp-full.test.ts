import { describe, expect, test, vi } from 'vitest';
import { hangingReply, textReply, toolCallReply, toolResult } from '../../../test-support/cli-wire.js';
import { runCli, startCli } from './support/cli.js';
import { useCliHarness } from './support/harness.js';
import { configureFullServer, recordedEvents } from './support/mcp-fixture.js';

const harness = useCliHarness();

describe('MCP resources, elicitation and cancellation in youyou -p', () => {
  test('the model lists and reads a server resource through its read-only tools', async () => {
    await configureFullServer(harness.sandbox);
    harness.server.reply(
      toolCallReply({ id: 'call_list', name: 'full__list_resources', arguments: {} }),
      toolCallReply({ id: 'call_read', name: 'full__read_resource', arguments: { uri: 'note://alpha' } }),
      textReply('read it'),
    );
    const result = await runCli({
      args: ['-p', 'what do the notes say?', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('read it\n');
    const [, second, third] = harness.server.turnRequests();
    expect(toolResult(second!, 'call_list')).toContain('note://alpha');
    expect(toolResult(third!, 'call_read')).toBe('alpha notes: the launch is on Tuesday');
  }, 60_000);

  test("with no terminal to ask, a server's question is declined and the server hears so", async () => {
    const events = await configureFullServer(harness.sandbox);
    harness.server.reply(
      toolCallReply({ id: 'call_ask', name: 'full__ask', arguments: {} }),
      textReply('declined'),
    );
    const result = await runCli({
      args: ['-p', 'ask me', '--base-url', harness.server.baseURL, '--yes'],
      sandbox: harness.sandbox,
    });
    expect(result.code).toBe(0);
    expect(toolResult(harness.server.turnRequests()[1]!, 'call_ask')).toBe('answer: {"action":"decline"}');
    expect(recordedEvents(events)).toContainEqual({ event: 'elicited', result: { action: 'decline' } });
  }, 60_000);

  test('a turn cancelled (SIGINT) mid-call sends notifications/cancelled to the server', async () => {
    const events = await configureFullServer(harness.sandbox);
    harness.server.reply(
      toolCallReply({ id: 'call_slow', name: 'full__slow', arguments: {} }),
      hangingReply('never asked for'),
    );
    const running = startCli({
      args: ['-p', 'wait', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    await vi.waitFor(
      () => expect(recordedEvents(events).map((entry) => entry.event)).toContain('slow_started'),
      { timeout: 30_000, interval: 50 },
    );
    running.child.kill('SIGINT');
    expect((await running.result).code).toBe(130);
    await vi.waitFor(
      () => expect(recordedEvents(events).map((entry) => entry.event)).toContain('cancelled'),
      { timeout: 10_000, interval: 50 },
    );
  }, 60_000);
});
