import { AgentBuilder, type AgentEvent, type ToolHandler } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';
import { describe, expect, test } from 'vitest';
import {
  type ApprovalAnswer,
  type ApprovalPolicy,
  type ApprovalRequest,
  createApprovalGate,
  mutatingToolNames,
  nonInteractiveDenial,
  unansweredQuestion,
} from '../src/approval/policy.js';
import type { ApprovalRules } from '../src/approval/rules.js';

function tool(name: string, isMutating: boolean, runs: string[]): ToolHandler {
  return {
    name,
    description: `${name} for tests`,
    isMutating,
    parametersSchema: { type: 'object', properties: { path: { type: 'string' } } },
    execute: async () => {
      runs.push(name);
      return { content: `${name} ran`, isError: false };
    },
  };
}

/** Runs one turn in which the model calls each of `calls`, one per model call, then answers. */
async function turnWith(options: {
  policy: ApprovalPolicy;
  calls: string[];
  answerWithinMs?: number;
  rules?: ApprovalRules;
}) {
  const runs: string[] = [];
  const tools = [tool('read_thing', false, runs), tool('write_thing', true, runs)];
  const provider = new ScriptedModelProvider({
    responses: [
      ...options.calls.map((toolName) => [
        { type: 'tool_call' as const, toolName, arguments: { path: 'x' } },
      ]),
      [{ type: 'text' as const, text: 'done' }],
    ],
  });
  const gate = createApprovalGate({
    mutating: mutatingToolNames(tools),
    policy: options.policy,
    answerWithinMs: options.answerWithinMs ?? 5_000,
    ...(options.rules === undefined ? {} : { rules: options.rules }),
  });
  const builder = new AgentBuilder({ defaultModel: 'scripted-model' }).registerModelProvider(provider);
  for (const handler of tools) {
    builder.registerTool({ ...handler, needsApproval: (args) => gate.needsApproval(handler.name, args) });
  }
  const agent = await builder.build();
  const session = await agent.newSession();
  const events: AgentEvent[] = [];
  for await (const event of await session.sendMessage('go', { approve: gate.approve })) events.push(event);
  await agent.shutdown();
  const ends = events.flatMap((event) => (event.payload.type === 'tool_call_end' ? [event.payload] : []));
  return { runs, results: ends.map((end) => end.output), denied: ends.map((end) => end.denied === true) };
}

function asking(answers: ApprovalAnswer[], asked: ApprovalRequest[]): ApprovalPolicy {
  return {
    type: 'ask',
    ask: async (request) => {
      asked.push(request);
      return answers.shift() ?? { type: 'deny' };
    },
  };
}

describe('the approval gate', () => {
  test('read-only tools run without a question', async () => {
    const asked: ApprovalRequest[] = [];
    const { runs } = await turnWith({ policy: asking([], asked), calls: ['read_thing'] });
    expect(runs).toEqual(['read_thing']);
    expect(asked).toEqual([]);
  });

  test('a mutating tool runs once allowed, with the question naming the tool and its arguments', async () => {
    const asked: ApprovalRequest[] = [];
    const { runs } = await turnWith({ policy: asking([{ type: 'once' }], asked), calls: ['write_thing'] });
    expect(runs).toEqual(['write_thing']);
    expect(asked).toMatchObject([{ toolName: 'write_thing', arguments: { path: 'x' } }]);
  });

  test('"once" asks again next time; "always" does not', async () => {
    const onceAsked: ApprovalRequest[] = [];
    await turnWith({
      policy: asking([{ type: 'once' }, { type: 'once' }], onceAsked),
      calls: ['write_thing', 'write_thing'],
    });
    expect(onceAsked).toHaveLength(2);
    const alwaysAsked: ApprovalRequest[] = [];
    const { runs } = await turnWith({
      policy: asking([{ type: 'always', rule: { tool: 'write_thing', text: 'write_thing' } }], alwaysAsked),
      calls: ['write_thing', 'write_thing'],
    });
    expect(alwaysAsked).toHaveLength(1);
    expect(runs).toEqual(['write_thing', 'write_thing']);
  });

  test('a denial stops the tool and tells the model', async () => {
    const { runs, results, denied } = await turnWith({
      policy: asking([{ type: 'deny' }], []),
      calls: ['write_thing'],
    });
    expect(runs).toEqual([]);
    expect(results[0]).toEqual({
      isError: true,
      content: "Tool 'write_thing' was denied: the user denied running write_thing",
    });
    expect(denied).toEqual([true]);
  });

  test('deny_all tells the model how the user can allow it; allow_all runs everything', async () => {
    const denied = await turnWith({ policy: { type: 'deny_all' }, calls: ['write_thing'] });
    expect(denied.runs).toEqual([]);
    expect(denied.results[0]?.content).toBe(
      `Tool 'write_thing' was denied: ${nonInteractiveDenial('write_thing')}`,
    );
    expect(denied.denied).toEqual([true]);
    expect(nonInteractiveDenial('write_thing')).toBe(
      'the user did not approve running write_thing; in non-interactive mode pass --yes',
    );
    const allowed = await turnWith({ policy: { type: 'allow_all' }, calls: ['write_thing', 'read_thing'] });
    expect(allowed.runs).toEqual(['write_thing', 'read_thing']);
  });

  test('no answer in time stops the tool and is reported as unanswered, not as a refusal', async () => {
    let signalled = false;
    const policy: ApprovalPolicy = {
      type: 'ask',
      // Like the terminal's question: it answers "deny" the moment it is given up.
      ask: (_request, signal) =>
        new Promise<ApprovalAnswer>((resolve) => {
          signal.addEventListener('abort', () => {
            signalled = true;
            resolve({ type: 'deny' });
          });
        }),
    };
    const { runs, results } = await turnWith({ policy, calls: ['write_thing'], answerWithinMs: 50 });
    expect(runs).toEqual([]);
    expect(results[0]?.content).toBe(
      `Tool 'write_thing' was denied: ${unansweredQuestion('write_thing', 0)}`,
    );
    expect(results[0]?.content).toContain('it was not refused');
    expect(signalled).toBe(true);
  });

  test('a denial with a reason hands the reason to the model', async () => {
    const { results } = await turnWith({
      policy: asking([{ type: 'deny', reason: 'use the staging folder' }], []),
      calls: ['write_thing'],
    });
    expect(results[0]?.content).toContain('use the staging folder');
  });

  test('deny rules win over allow rules and over --yes; allow rules skip the question', async () => {
    const rules = {
      allow: [{ tool: 'write_thing', text: 'write_thing' }],
      deny: [{ tool: 'write_thing', pattern: 'x', text: 'write_thing(x)' }],
    };
    const denied = await turnWith({ policy: { type: 'allow_all' }, calls: ['write_thing'], rules });
    expect(denied.runs).toEqual([]);
    expect(denied.results[0]?.content).toContain('write_thing(x)');
    const asked: ApprovalRequest[] = [];
    const allowed = await turnWith({
      policy: asking([], asked),
      calls: ['write_thing'],
      rules: { allow: rules.allow, deny: [] },
    });
    expect(allowed.runs).toEqual(['write_thing']);
    expect(asked).toEqual([]);
  });

  test('a question that fails is a denial', async () => {
    const policy: ApprovalPolicy = { type: 'ask', ask: () => Promise.reject(new Error('terminal gone')) };
    const { runs, results } = await turnWith({ policy, calls: ['write_thing'] });
    expect(runs).toEqual([]);
    expect(results[0]?.isError).toBe(true);
  });
});
