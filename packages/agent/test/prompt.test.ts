import { describe, expect, it } from 'vitest';
import type { SkillDefinition } from '../src/kernel/config.js';
import {
  MEMORY_INSTRUCTIONS,
  PLUGIN_SECTION_HEADER,
  SKILL_SECTION_HEADER,
  SKILL_USAGE_RULES,
} from '../src/kernel/templates.js';
import type { Message, PluginDescriptor } from '../src/kernel/types.js';
import type { Memory } from '../src/ports/storage.js';
import { buildDynamicPrompt, buildStablePrompt, placeDynamicPrompt } from '../src/prompt/index.js';

const skills: SkillDefinition[] = [
  { name: 'plan', description: 'Plans work\nbefore starting', prompt: 'p', allowImplicitInvocation: true },
  { name: 'review', description: 'Reviews code', prompt: 'r', allowImplicitInvocation: true },
];
const plugins: PluginDescriptor[] = [
  { id: 'audit', displayName: 'Audit log', description: 'Logs tool calls' },
  { id: 'guard', displayName: 'Guard', description: 'Blocks rm -rf' },
];

function memory(content: string, category?: string): Memory {
  const time = new Date(0);
  return {
    id: content,
    namespace: 'default',
    content,
    ...(category === undefined ? {} : { category }),
    createdAt: time,
    updatedAt: time,
  };
}

describe('buildStablePrompt', () => {
  it('renders every part in order, separated by blank lines', () => {
    const prompt = buildStablePrompt({
      systemInstructions: ['Be brief.', 'Answer in English.'],
      systemPromptOverride: 'You work on the billing service.',
      personality: { name: 'Ada', description: 'A careful engineer.' },
      implicitSkills: skills,
      plugins,
    });
    expect(prompt).toBe(
      [
        '<system_instructions>\nBe brief.\n\nAnswer in English.\n\nYou work on the billing service.\n</system_instructions>',
        '<personality>\n<name>Ada</name>\nA careful engineer.\n</personality>',
        `${SKILL_SECTION_HEADER}\n- plan: Plans work before starting\n- review: Reviews code\n\n${SKILL_USAGE_RULES}`,
        `${PLUGIN_SECTION_HEADER}\n- Audit log (audit): Logs tool calls\n- Guard (guard): Blocks rm -rf`,
      ].join('\n\n'),
    );
  });

  it('is empty when there is nothing to say', () => {
    expect(buildStablePrompt({ systemInstructions: [], implicitSkills: [], plugins: [] })).toBe('');
    expect(
      buildStablePrompt({
        systemInstructions: ['', '  '],
        systemPromptOverride: '',
        personality: { description: '' },
        implicitSkills: [],
        plugins: [],
      }),
    ).toBe('');
  });

  it('puts the override inside the system instructions even when there are none', () => {
    expect(
      buildStablePrompt({
        systemInstructions: [],
        systemPromptOverride: 'Only this.',
        implicitSkills: [],
        plugins: [],
      }),
    ).toBe('<system_instructions>\nOnly this.\n</system_instructions>');
  });

  it('renders a personality without a name, and leaves out the parts that are empty', () => {
    const prompt = buildStablePrompt({
      systemInstructions: [],
      personality: { description: 'Cheerful.' },
      implicitSkills: [],
      plugins: [plugins[0]!],
    });
    expect(prompt).toBe(
      `<personality>\nCheerful.\n</personality>\n\n${PLUGIN_SECTION_HEADER}\n- Audit log (audit): Logs tool calls`,
    );
  });

  it('lists skills without the plugin section when no plugin is active', () => {
    const prompt = buildStablePrompt({
      systemInstructions: ['Hi.'],
      implicitSkills: [skills[1]!],
      plugins: [],
    });
    expect(prompt).toBe(
      `<system_instructions>\nHi.\n</system_instructions>\n\n${SKILL_SECTION_HEADER}\n- review: Reviews code\n\n${SKILL_USAGE_RULES}`,
    );
    expect(prompt).not.toContain(PLUGIN_SECTION_HEADER);
  });
});

describe('buildDynamicPrompt', () => {
  it('renders memories, environment context and dynamic sections in that order', () => {
    const prompt = buildDynamicPrompt({
      memories: [memory('Prefers tabs.', 'preference'), memory('Works on billing.')],
      environmentContext: {
        cwd: '/home/ada/billing',
        platform: 'linux',
        shell: 'bash',
        date: '2025-01-31',
        timezone: 'Europe/Paris',
        extra: { branch: 'main', ci: 'github' },
      },
      dynamicSections: ['## Open files\nmain.ts', '', 'Be quick today.'],
    });
    expect(prompt).toBe(
      [
        `${MEMORY_INSTRUCTIONS}\n\n- [preference] Prefers tabs.\n- Works on billing.`,
        '<environment_context>\ncwd: /home/ada/billing\nplatform: linux\nshell: bash\ndate: 2025-01-31\ntimezone: Europe/Paris\nbranch: main\nci: github\n</environment_context>',
        '## Open files\nmain.ts',
        'Be quick today.',
      ].join('\n\n'),
    );
  });

  it('keeps memories in the order given', () => {
    const prompt = buildDynamicPrompt({
      memories: [memory('second', 'b'), memory('first', 'a')],
      dynamicSections: [],
    });
    expect(prompt).toBe(`${MEMORY_INSTRUCTIONS}\n\n- [b] second\n- [a] first`);
  });

  it('renders only the environment fields that are set', () => {
    const prompt = buildDynamicPrompt({
      memories: [],
      environmentContext: { platform: 'darwin' },
      dynamicSections: [],
    });
    expect(prompt).toBe('<environment_context>\nplatform: darwin\n</environment_context>');
  });

  it('is empty when there is nothing to say', () => {
    expect(buildDynamicPrompt({ memories: [], dynamicSections: [] })).toBe('');
    expect(buildDynamicPrompt({ memories: [], environmentContext: {}, dynamicSections: ['', ' \n'] })).toBe(
      '',
    );
  });

  it('holds only the dynamic sections when there is neither memory nor environment', () => {
    expect(buildDynamicPrompt({ memories: [], dynamicSections: ['one', 'two'] })).toBe('one\n\ntwo');
  });
});

describe('placeDynamicPrompt', () => {
  const user = (text: string): Message => ({ type: 'user', content: [{ type: 'text', text }] });
  const history: Message[] = [
    user('first'),
    { type: 'assistant', content: [{ type: 'text', text: 'ok' }], status: 'complete' },
    user('second'),
    { type: 'tool_call', callId: 'c1', toolName: 'lookup', arguments: {} },
    { type: 'tool_result', callId: 'c1', content: 'found', isError: false },
  ];

  it('puts the dynamic part right before the latest user message, leaving the history as it was', () => {
    const before = structuredClone(history);
    const placed = placeDynamicPrompt(history, 'memories');
    expect(placed).toEqual([
      history[0],
      history[1],
      { type: 'system', content: 'memories' },
      history[2],
      history[3],
      history[4],
    ]);
    expect(history).toEqual(before);
  });

  it('puts it first when the history has no user message, and adds nothing for an empty part', () => {
    const noUser = history.slice(3);
    expect(placeDynamicPrompt(noUser, 'env')).toEqual([{ type: 'system', content: 'env' }, ...noUser]);
    expect(placeDynamicPrompt([], 'env')).toEqual([{ type: 'system', content: 'env' }]);
    const copy = placeDynamicPrompt(history, '');
    expect(copy).toEqual(history);
    expect(copy).not.toBe(history);
  });
});
