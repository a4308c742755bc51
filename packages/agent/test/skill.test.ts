import { describe, expect, it } from 'vitest';
import type { SkillDefinition } from '../src/kernel/config.js';
import type { AgentError } from '../src/kernel/error.js';
import type { ToolHandler } from '../src/ports/tool.js';
import {
  ACTIVATE_SKILL_TOOL_NAME,
  SKILL_NAME_PATTERN,
  SkillManager,
  validateSkills,
} from '../src/skills/skill.js';

const review: SkillDefinition = { name: 'review', description: 'Reviews code', prompt: 'Review carefully.' };
const deploy: SkillDefinition = {
  name: 'deploy-app_2',
  description: 'Deploys',
  prompt: 'Deploy it.',
  allowImplicitInvocation: true,
};
const usr: SkillDefinition = { name: 'usr', description: 'a skill named like a folder', prompt: 'x' };
const plan: SkillDefinition = {
  name: 'plan',
  description: 'Plans work',
  prompt: 'Plan first.',
  allowImplicitInvocation: true,
};

const manager = new SkillManager([review, deploy, usr, plan]);

function names(text: string): string[] {
  return manager.detectInvocations(text).map((skill) => skill.name);
}

describe('SkillManager.detectInvocations', () => {
  it.each([
    ['at the start of the text', '/review this please', ['review']],
    ['after a space', 'please /review this', ['review']],
    ['after a newline or tab', 'first line\n/review\t/plan', ['review', 'plan']],
    ['the whole text', '/review', ['review']],
    ['followed by punctuation', 'do /review, then /plan.', ['review', 'plan']],
    ['with - and _ and digits', 'run /deploy-app_2 now', ['deploy-app_2']],
  ])('finds an invocation %s', (_label, text, expected) => {
    expect(names(text)).toEqual(expected);
  });

  it.each([
    ['an unknown name', '/unknown and /reviewer'],
    ['a path', 'look at /usr/bin and /review/file'],
    ['a mid-word slash', 'a/review and either/or'],
    ['a slash alone', 'x / y'],
    ['an empty text', ''],
    ['a name that runs on past the skill name', '/reviews'],
  ])('ignores %s', (_label, text) => {
    expect(names(text)).toEqual([]);
  });

  it('does not shorten a path to a registered name', () => {
    expect(names('/usrx/bin /usr/local')).toEqual([]);
    expect(names('/usr is a folder')).toEqual(['usr']);
  });

  it('returns each skill once, in order of first appearance', () => {
    expect(names('/plan then /review then /plan again /review')).toEqual(['plan', 'review']);
  });

  it('finds invocations in a second call too (no state kept between calls)', () => {
    expect(names('/review')).toEqual(['review']);
    expect(names('/review')).toEqual(['review']);
  });
});

describe('SkillManager.renderInjection', () => {
  it('wraps the prompt with the skill name in a system message', () => {
    expect(manager.renderInjection(review)).toEqual({
      type: 'system',
      content: '<skill>\n<name>review</name>\nReview carefully.\n</skill>',
    });
  });
});

describe('SkillManager.implicitSkills', () => {
  it('returns the skills with allowImplicitInvocation, in registration order', () => {
    expect(manager.implicitSkills().map((skill) => skill.name)).toEqual(['deploy-app_2', 'plan']);
  });
});

describe('activate_skill', () => {
  function call(tool: ToolHandler, args: unknown) {
    return tool.execute({
      callId: 'c1',
      arguments: args,
      sessionId: 's',
      turnId: 't',
      signal: new AbortController().signal,
    });
  }

  it('is not offered when no skill allows implicit invocation', () => {
    expect(new SkillManager([review, usr]).createActivateSkillTool()).toBeUndefined();
    expect(new SkillManager([]).createActivateSkillTool()).toBeUndefined();
  });

  it('is a read-only tool taking one required name', () => {
    const tool = manager.createActivateSkillTool()!;
    expect(tool.name).toBe(ACTIVATE_SKILL_TOOL_NAME);
    expect(tool.name).toBe('activate_skill');
    expect(tool.isMutating).toBe(false);
    expect(tool.description).not.toBe('');
    expect(tool.parametersSchema).toMatchObject({
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
      additionalProperties: false,
    });
    const properties = tool.parametersSchema.properties as { name: { description: string } };
    expect(properties.name.description).toContain('plan');
  });

  it("returns the skill's prompt wrapped with its name", async () => {
    const tool = manager.createActivateSkillTool()!;
    await expect(call(tool, { name: 'plan' })).resolves.toEqual({
      isError: false,
      content: '<skill>\n<name>plan</name>\nPlan first.\n</skill>',
    });
  });

  it('refuses an unknown skill and a skill without implicit invocation', async () => {
    const tool = manager.createActivateSkillTool()!;
    await expect(call(tool, { name: 'nope' })).resolves.toEqual({
      isError: true,
      content: "[SKILL_NOT_FOUND] skill 'nope'",
    });
    await expect(call(tool, { name: 'review' })).resolves.toEqual({
      isError: true,
      content: "[SKILL_NOT_FOUND] skill 'review'",
    });
    await expect(call(tool, undefined)).resolves.toMatchObject({ isError: true });
  });
});

describe('validateSkills', () => {
  function codeOf(skills: unknown[], toolNames: string[] = []): string | undefined {
    try {
      validateSkills({ skills: skills as SkillDefinition[], toolNames: new Set(toolNames) });
      return undefined;
    } catch (error) {
      return (error as AgentError).code;
    }
  }

  it('accepts valid skills whose required tools are registered', () => {
    expect(codeOf([review, { ...plan, requiredTools: ['read_file'] }], ['read_file'])).toBeUndefined();
  });

  it.each([
    ['an empty name', { ...review, name: '' }],
    ['a name with a space', { ...review, name: 'my skill' }],
    ['a name with a slash', { ...review, name: 'a/b' }],
    ['a name of 65 characters', { ...review, name: 'a'.repeat(65) }],
    ['a name that is not a string', { ...review, name: 42 }],
    ['a description that is not a string', { ...review, description: undefined }],
    ['a prompt that is not a string', { ...review, prompt: 7 }],
    ['requiredTools that is not a list of names', { ...review, requiredTools: 'read_file' }],
  ])('rejects %s with INVALID_CONFIG', (_label, skill) => {
    expect(codeOf([skill])).toBe('INVALID_CONFIG');
  });

  it('accepts a name of 64 characters', () => {
    expect(SKILL_NAME_PATTERN.test('a'.repeat(64))).toBe(true);
    expect(codeOf([{ ...review, name: 'a'.repeat(64) }])).toBeUndefined();
  });

  it('rejects a duplicate name with NAME_CONFLICT', () => {
    expect(codeOf([review, { ...plan, name: 'review' }])).toBe('NAME_CONFLICT');
  });

  it('rejects a missing required tool with SKILL_DEPENDENCY_NOT_MET naming the skill and the tool', () => {
    const skill = { ...review, requiredTools: ['read_file', 'write_file'] };
    expect(() => validateSkills({ skills: [skill], toolNames: new Set(['read_file']) })).toThrow(
      expect.objectContaining({
        code: 'SKILL_DEPENDENCY_NOT_MET',
        message: expect.stringMatching(/skill 'review'.*tool 'write_file'/),
      }),
    );
  });
});
