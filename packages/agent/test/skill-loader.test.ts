import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentBuilder } from '../src/index.js';
import { loadSkillsFromDirectories } from '../src/skills/skill-loader.js';
import { ScriptedModelProvider } from '../src/testing/index.js';

let base: string;

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'youyou-skills-'));
});

afterEach(() => rm(base, { recursive: true, force: true }));

/** Writes `<base>/<directory>/<folder>/SKILL.md` and returns its path. */
async function putSkill(options: { directory: string; folder: string; text: string }): Promise<string> {
  const folder = path.join(base, options.directory, options.folder);
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, 'SKILL.md');
  await writeFile(file, options.text);
  return file;
}

function skillText(frontMatter: string, body = 'Do the thing.'): string {
  return `---\n${frontMatter}\n---\n${body}\n`;
}

describe('loadSkillsFromDirectories', () => {
  it('loads every field from front matter and the trimmed body as the prompt', async () => {
    await putSkill({
      directory: 'skills',
      folder: 'review',
      text: [
        '---',
        'name: code-review',
        'display_name: Code review',
        'description: Reviews the staged changes.',
        'allow_implicit_invocation: true',
        'required_tools:',
        '  - shell',
        '  - read_file',
        'license: MIT',
        '---',
        '',
        '  Run `git diff --staged`.',
        '',
        'Then comment on each file.  ',
        '',
      ].join('\n'),
    });
    await putSkill({
      directory: 'skills',
      folder: 'plain',
      text: '\uFEFF---\r\nname: plain\r\ndescription: A minimal skill\r\n---\r\nJust this.\r\n',
    });
    const loaded = await loadSkillsFromDirectories({ directories: [path.join(base, 'skills')] });
    expect(loaded.problems).toEqual([]);
    expect(loaded.skills).toEqual([
      { name: 'plain', description: 'A minimal skill', prompt: 'Just this.' },
      {
        name: 'code-review',
        displayName: 'Code review',
        description: 'Reviews the staged changes.',
        prompt: 'Run `git diff --staged`.\n\nThen comment on each file.',
        allowImplicitInvocation: true,
        requiredTools: ['shell', 'read_file'],
      },
    ]);
  });

  it('treats a missing directory as empty', async () => {
    const loaded = await loadSkillsFromDirectories({
      directories: [path.join(base, 'nowhere'), path.join(base, 'x')],
    });
    expect(loaded).toEqual({ skills: [], problems: [] });
  });

  it('reports each malformed file with its path and keeps the good ones', async () => {
    const directory = path.join(base, 'skills');
    const cases: [string, string, RegExp][] = [
      ['no-front', 'Just a prompt, no front matter.\n', /^no front matter/],
      ['unclosed', '---\nname: x\ndescription: y\nbody\n', /front matter is not closed/],
      ['bad-yaml', skillText('name: [unclosed\ndescription: y'), /^invalid YAML front matter/],
      ['list-yaml', skillText('- name\n- description'), /must be a YAML mapping/],
      ['empty-front', '---\n---\nbody\n', /must be a YAML mapping/],
      ['no-name', skillText('description: y'), /has no `name`/],
      ['bad-name', skillText('name: has spaces\ndescription: y'), /name "has spaces" must be 1 to 64/],
      ['long-name', skillText(`name: ${'a'.repeat(65)}\ndescription: y`), /must be 1 to 64/],
      ['number-name', skillText('name: 42\ndescription: y'), /name 42 must be/],
      ['no-description', skillText('name: nodesc'), /needs a `description`/],
      ['blank-description', skillText('name: blank\ndescription: "  "'), /needs a `description`/],
      [
        'bad-implicit',
        skillText('name: i\ndescription: y\nallow_implicit_invocation: "yes"'),
        /must be true or false/,
      ],
      [
        'bad-tools',
        skillText('name: t\ndescription: y\nrequired_tools: shell'),
        /must be a list of tool names/,
      ],
      [
        'bad-tool-item',
        skillText('name: t2\ndescription: y\nrequired_tools: [shell, 3]'),
        /list of tool names/,
      ],
      [
        'bad-display',
        skillText('name: d\ndescription: y\ndisplay_name: [a]'),
        /`display_name` must be a string/,
      ],
      ['empty-body', skillText('name: e\ndescription: y', '   \n\n'), /has no prompt/],
      [
        'duplicate-key',
        skillText('name: a\nname: b\ndescription: y'),
        /^invalid YAML front matter: .*\(line 3, column 1\)$/,
      ],
    ];
    const expected: { path: string; message: RegExp }[] = [];
    for (const [folder, text, message] of cases) {
      expected.push({ path: await putSkill({ directory: 'skills', folder, text }), message });
    }
    await putSkill({
      directory: 'skills',
      folder: 'zz-good',
      text: skillText('name: good\ndescription: fine'),
    });
    const loaded = await loadSkillsFromDirectories({ directories: [directory] });
    expect(loaded.skills.map((skill) => skill.name)).toEqual(['good']);
    expect(loaded.problems).toHaveLength(cases.length);
    for (const { path: file, message } of expected) {
      const problem = loaded.problems.find((candidate) => candidate.path === file);
      expect(problem, file).toBeDefined();
      expect(problem?.message, file).toMatch(message);
    }
  });

  it('lets the first directory win a duplicate name and reports the later one', async () => {
    const workspaceFile = await putSkill({
      directory: 'workspace',
      folder: 'deploy',
      text: skillText('name: deploy\ndescription: workspace version'),
    });
    const homeFile = await putSkill({
      directory: 'home',
      folder: 'deploy-skill',
      text: skillText('name: deploy\ndescription: home version'),
    });
    await putSkill({
      directory: 'home',
      folder: 'other',
      text: skillText('name: other\ndescription: only at home'),
    });
    const loaded = await loadSkillsFromDirectories({
      directories: [path.join(base, 'workspace'), path.join(base, 'home')],
    });
    expect(loaded.skills.map((skill) => `${skill.name}: ${skill.description}`)).toEqual([
      'deploy: workspace version',
      'other: only at home',
    ]);
    expect(loaded.problems).toEqual([
      {
        path: homeFile,
        message: `skill 'deploy' is already defined by ${workspaceFile}; this definition is ignored`,
      },
    ]);
  });

  it('reports a folder without SKILL.md and a directory that is a file, and ignores loose and hidden entries', async () => {
    const skills = path.join(base, 'skills');
    await mkdir(path.join(skills, 'empty-folder'), { recursive: true });
    await mkdir(path.join(skills, '.hidden'));
    await writeFile(path.join(skills, '.hidden', 'SKILL.md'), 'not even front matter');
    await writeFile(path.join(skills, 'README.md'), 'loose file');
    const notADirectory = path.join(base, 'file.txt');
    await writeFile(notADirectory, 'x');
    const loaded = await loadSkillsFromDirectories({ directories: [skills, notADirectory] });
    expect(loaded.skills).toEqual([]);
    expect(loaded.problems).toEqual([
      { path: path.join(skills, 'empty-folder'), message: 'no SKILL.md in this skill folder' },
      { path: notADirectory, message: 'is not a directory: a skills directory holds one folder per skill' },
    ]);
  });

  it('follows a symlinked skill folder', async () => {
    await putSkill({
      directory: 'shared',
      folder: 'lint',
      text: skillText('name: lint\ndescription: Lints'),
    });
    await mkdir(path.join(base, 'skills'));
    await symlink(path.join(base, 'shared', 'lint'), path.join(base, 'skills', 'lint-link'));
    const loaded = await loadSkillsFromDirectories({ directories: [path.join(base, 'skills')] });
    expect(loaded.skills.map((skill) => skill.name)).toEqual(['lint']);
  });

  it('gives definitions an agent accepts and injects on /name', async () => {
    await putSkill({
      directory: 'skills',
      folder: 'deploy',
      text: skillText(
        'name: deploy\ndescription: Deploys the app\nallow_implicit_invocation: false',
        'Ship it.',
      ),
    });
    const { skills, problems } = await loadSkillsFromDirectories({
      directories: [path.join(base, 'skills')],
    });
    expect(problems).toEqual([]);
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'done' }]] });
    let builder = new AgentBuilder({ defaultModel: 'scripted-model' }).registerModelProvider(provider);
    for (const skill of skills) builder = builder.registerSkill(skill);
    const agent = await builder.build();
    const session = await agent.newSession();
    for await (const _event of await session.sendMessage('/deploy now')) {
      // Drain the turn.
    }
    expect(session.messages()[0]).toEqual({
      type: 'system',
      content: '<skill>\n<name>deploy</name>\nShip it.\n</skill>',
    });
    await session.close();
    await agent.shutdown();
  });
});
