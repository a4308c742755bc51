import type { AgentEvent, AgentEventPayload, UsageTotals } from '@youyou/agent';
import { AgentError } from '@youyou/agent';
import { describe, expect, test, vi } from 'vitest';
import {
  describeOutput,
  displayWidth,
  rowsOf,
  summarizeArguments,
  truncate,
  wrapLine,
} from '../src/chat/format.js';
import { TurnView } from '../src/chat/render.js';

let sequence = 0;
/** Hiding and showing the cursor. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI sequences start with the escape character.
const CURSOR_CODES = /\u001b\[\?25[hl]/g;
function event(payload: AgentEventPayload): AgentEvent {
  sequence += 1;
  return { sessionId: 's', turnId: 't', timestamp: new Date(0), sequence, payload };
}

function view(options: { live: boolean; showReasoning?: boolean; columns?: number }) {
  const answer: string[] = [];
  const activity: string[] = [];
  const shared: string[] = [];
  const turnView = new TurnView({
    sinks: {
      answer: (text) => {
        answer.push(text);
        shared.push(text);
      },
      activity: (text) => {
        activity.push(text);
        shared.push(text);
      },
    },
    live: options.live,
    color: false,
    columns: () => options.columns ?? 80,
    showReasoning: () => options.showReasoning ?? false,
    baseURL: 'http://127.0.0.1:9/v1',
  });
  // Hiding and showing the cursor around spinners is left out of what the tests compare.
  const visible = (parts: string[]) => parts.join('').replace(CURSOR_CODES, '');
  return {
    turnView,
    answer: () => visible(answer),
    activity: () => visible(activity),
    screen: () => visible(shared),
  };
}

/** The totals of a turn whose server reported no usage. */
const NO_USAGE: UsageTotals = {
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  modelCalls: 0,
};

const toolStart = (callId: string): AgentEventPayload => ({
  type: 'tool_call_start',
  callId,
  toolName: 'read_file',
  arguments: { path: `${callId}.txt` },
});
const toolEnd = (callId: string, isError = false): AgentEventPayload => ({
  type: 'tool_call_end',
  callId,
  toolName: 'read_file',
  output: { content: isError ? 'no such file\nmore' : 'a\nb\n', isError },
  durationMs: 12,
  success: !isError,
});

describe('TurnView without a live terminal (print mode)', () => {
  test('the answer goes to one sink, tool activity and the reasoning summary to the other', () => {
    const { turnView, answer, activity } = view({ live: false });
    for (const payload of [
      { type: 'reasoning_delta', text: 'Let me look at it.' },
      { type: 'text_delta', text: 'Looking.' },
      toolStart('a'),
      toolEnd('a'),
      toolStart('b'),
      toolEnd('b', true),
      { type: 'text_delta', text: 'Done.' },
      { type: 'turn_complete', usage: NO_USAGE },
    ] satisfies AgentEventPayload[]) {
      turnView.handle(event(payload));
    }
    turnView.close();
    expect(answer()).toBe('Looking.\nDone.\n');
    expect(activity()).toBe(
      [
        '∴ thought for 5 words',
        '→ read_file a.txt',
        '✓ read_file a.txt · 12 ms · 2 lines',
        '→ read_file b.txt',
        '✗ read_file b.txt · 12 ms · no such file',
        '',
      ].join('\n'),
    );
  });

  test('after the answer, one line gives the turn’s tokens and cost; a turn without usage gives none', () => {
    const { turnView, answer, activity } = view({ live: false });
    turnView.handle(event({ type: 'text_delta', text: 'Done.' }));
    const usage: UsageTotals = {
      inputTokens: 12_345,
      outputTokens: 678,
      cachedInputTokens: 10_000,
      cacheWriteTokens: 0,
      reasoningTokens: 90,
      modelCalls: 2,
      costUsd: 0.01234,
    };
    turnView.handle(event({ type: 'usage', purpose: 'turn', providerId: 'p', modelId: 'm', usage }));
    turnView.handle(event({ type: 'turn_complete', usage }));
    turnView.close();
    expect(answer()).toBe('Done.\n');
    expect(activity()).toBe('12,345 in (10,000 cached) · 678 out (90 reasoning) · $0.0123\n');

    const quiet = view({ live: false });
    quiet.turnView.handle(event({ type: 'text_delta', text: 'Done.' }));
    quiet.turnView.handle(event({ type: 'turn_complete', usage: NO_USAGE }));
    quiet.turnView.close();
    expect(quiet.activity()).toBe('');
  });

  test('a running call’s output is written as it comes, escaped, and its line ended before the call’s end', () => {
    const { turnView, activity } = view({ live: false });
    turnView.handle(event(toolStart('a')));
    turnView.handle(event({ type: 'tool_output_delta', callId: 'a', text: 'half' }));
    expect(activity()).toBe('→ read_file a.txt\nhalf');
    turnView.handle(event({ type: 'tool_output_delta', callId: 'a', text: ' a line\x1b]0;owned\x07\r\n' }));
    turnView.handle(event({ type: 'tool_output_delta', callId: 'a', text: 'open' }));
    turnView.line('a notice');
    turnView.handle(event({ type: 'tool_output_delta', callId: 'a', text: 'no newline' }));
    turnView.handle(event(toolEnd('a')));
    // A delta of a call that ended, or of no call shown, draws nothing.
    turnView.handle(event({ type: 'tool_output_delta', callId: 'a', text: 'late' }));
    turnView.handle(event({ type: 'tool_output_delta', callId: 'zz', text: 'stray' }));
    expect(activity()).toBe(
      '→ read_file a.txt\nhalf a line\\e]0;owned\\a\nopen\na notice\nno newline\n✓ read_file a.txt · 12 ms · 2 lines\n',
    );
  });

  test('an unreachable server is said in one sentence', () => {
    const { turnView, activity } = view({ live: false });
    const error = new AgentError({
      code: 'PROVIDER_ERROR',
      message: "provider 'openai-compatible': could not reach http://127.0.0.1:9/v1: connect ECONNREFUSED",
    });
    turnView.handle(event({ type: 'error', error }));
    expect(activity()).toBe(
      '✗ cannot reach the model server at http://127.0.0.1:9/v1 — start it or correct --base-url, or pass --provider openai with OPENAI_API_KEY set.\n',
    );
  });
});

describe('TurnView on a live terminal', () => {
  test('reasoning is streamed, then erased and replaced by its summary', () => {
    const { turnView, screen } = view({ live: true, columns: 10 });
    turnView.handle(event({ type: 'reasoning_delta', text: 'abcdefghijkl\n' }));
    turnView.handle(event({ type: 'reasoning_delta', text: 'xyz' }));
    turnView.handle(event({ type: 'text_delta', text: 'Answer.' }));
    turnView.handle(event({ type: 'turn_complete', usage: NO_USAGE }));
    turnView.close();
    // 12 characters on 10 columns take two rows, then a third row: the cursor goes up two and clears.
    expect(screen()).toBe('abcdefghijkl\nxyz\r\x1b[2A\x1b[J∴ thought for 2 words\nAnswer.\n');
  });

  test('with /reasoning on, the reasoning stays', () => {
    const { turnView, screen } = view({ live: true, showReasoning: true });
    turnView.handle(event({ type: 'reasoning_delta', text: 'thinking hard' }));
    turnView.handle(event({ type: 'text_delta', text: 'Answer.' }));
    turnView.close();
    expect(screen()).toBe('thinking hard\nAnswer.\n');
  });

  test('running tools form a region redrawn in place; finished ones stay', () => {
    const { turnView, screen } = view({ live: true });
    turnView.handle(event(toolStart('a')));
    turnView.handle(event(toolStart('b')));
    turnView.handle(event(toolEnd('b')));
    turnView.handle(event(toolEnd('a')));
    turnView.handle(event({ type: 'turn_complete', usage: NO_USAGE }));
    turnView.close();
    const finalScreen = screen();
    expect(finalScreen).toContain('⠋ read_file a.txt\n⠋ read_file b.txt');
    expect(finalScreen).toContain('\r\x1b[1A\x1b[J⠋ read_file a.txt\n✓ read_file b.txt · 12 ms · 2 lines');
    expect(finalScreen).toMatch(
      /✓ read_file a\.txt · 12 ms · 2 lines\n✓ read_file b\.txt · 12 ms · 2 lines\n/,
    );
  });

  test('a running call’s last 5 output lines show under its line, escaped, and go when it ends', () => {
    vi.useFakeTimers();
    try {
      const { turnView, screen } = view({ live: true });
      turnView.handle(event(toolStart('a')));
      const text = 'one\ntwo\nthree\nfour\nfive\nsix\x1b[2J\nprogress 10%\rprogress 90%\n';
      turnView.handle(event({ type: 'tool_output_delta', callId: 'a', text }));
      // The region is redrawn with the spinner's next frame, not once per delta.
      vi.advanceTimersByTime(100);
      const running = screen().split('\x1b[J').at(-1) ?? '';
      expect(running).toMatch(
        /^⠙ read_file a\.txt\n {2}│ three\n {2}│ four\n {2}│ five\n {2}│ six\\e\[2J\n {2}│ progress 90%$/,
      );
      turnView.handle(event(toolEnd('a')));
      turnView.handle(event({ type: 'turn_complete', usage: NO_USAGE }));
      turnView.close();
      const frames = screen().split('\x1b[J');
      const ended = frames.findLast((frame) => frame.includes('✓')) ?? '';
      // The call's line, then (the model is asked again) the status: its output lines are gone.
      expect(ended).toMatch(/^✓ read_file a\.txt · 12 ms · 2 lines\n[^│]*$/);
      expect(frames.slice(frames.indexOf(ended)).join('')).not.toContain('│');
    } finally {
      vi.useRealTimers();
    }
  });

  test('of calls running together, only the one that reported last shows its lines', () => {
    vi.useFakeTimers();
    try {
      const { turnView, screen } = view({ live: true });
      turnView.handle(event(toolStart('a')));
      turnView.handle(event(toolStart('b')));
      turnView.handle(event({ type: 'tool_output_delta', callId: 'a', text: 'from a\n' }));
      turnView.handle(event({ type: 'tool_output_delta', callId: 'b', text: 'from b\n' }));
      vi.advanceTimersByTime(100);
      const running = screen().split('\x1b[J').at(-1) ?? '';
      expect(running).toMatch(/^⠙ read_file a\.txt\n⠙ read_file b\.txt\n {2}│ from b$/);
      turnView.close();
    } finally {
      vi.useRealTimers();
    }
  });

  test('a cancelled turn marks the tools that were still running', () => {
    const { turnView, screen } = view({ live: true });
    turnView.handle(event(toolStart('a')));
    turnView.handle(event({ type: 'turn_cancelled' }));
    turnView.close();
    expect(screen()).toMatch(/⏹ read_file a\.txt · cancelled\n⏹ cancelled\n/);
  });
});

describe('formatting', () => {
  test('summarizeArguments puts the main argument first and shortens the rest', () => {
    expect(summarizeArguments({ path: 'src/a.ts', startLine: 3 })).toBe('src/a.ts startLine=3');
    expect(summarizeArguments({ command: 'npm test', timeoutMs: 1000 })).toBe('npm test timeoutMs=1000');
    expect(summarizeArguments({ path: 'a.txt', content: 'one\ntwo\n' })).toBe('a.txt content=(2 lines)');
    expect(summarizeArguments({ old: 'a b', nested: { x: [1] } })).toBe('old="a b" nested={"x":[1]}');
    expect(summarizeArguments({ path: 'x'.repeat(100) })).toHaveLength(60);
  });

  test('describeOutput: an error’s first line (without the hook prefix), else the line count', () => {
    expect(describeOutput({ content: 'Tool aborted by hook: the user denied it\n', isError: true })).toBe(
      'the user denied it',
    );
    expect(
      describeOutput({ content: "Tool 'shell' was denied: the user denied running shell", isError: true }),
    ).toBe('denied: the user denied running shell');
    expect(describeOutput({ content: 'one line', isError: false })).toBe('1 line');
    expect(describeOutput({ content: '', isError: false })).toBe('no output');
  });

  test('widths count wide characters as two columns', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('日本')).toBe(4);
    // string-width knows what hand-made ranges missed: ⌚ is wide, a skin-tone emoji is one wide glyph,
    // a combining accent and a zero-width joiner take no room.
    expect(displayWidth('⌚')).toBe(2);
    expect(displayWidth('👍🏽')).toBe(2);
    expect(displayWidth('e\u0301')).toBe(1);
    expect(displayWidth('a\tb')).toBe(9);
    expect(wrapLine('ab日本cd', 3)).toEqual(['ab', '日', '本c', 'd']);
    expect(truncate('👍🏽👍🏽👍🏽', 4)).toBe('👍🏽…');
    expect(rowsOf('日本語日本', 4)).toBe(3);
    expect(rowsOf('', 80)).toBe(1);
    expect(truncate('hello world', 6)).toBe('hello…');
  });
});

test('a status shown while reasoning streams (Ctrl-C) collapses the reasoning first', () => {
  const { turnView, screen } = view({ live: true, columns: 10 });
  turnView.handle(event({ type: 'reasoning_delta', text: 'abcdefghijkl' }));
  turnView.status('cancelling');
  turnView.handle(event({ type: 'turn_cancelled' }));
  turnView.close();
  expect(screen()).toBe(
    'abcdefghijkl\r\x1b[1A\x1b[J∴ thought for 1 word\n⠋ cancelling…\r\x1b[J⏹ cancelled\n',
  );
});
