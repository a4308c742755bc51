import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse, YAMLError } from 'yaml';
import type { SkillDefinition } from '../kernel/config.js';
import { SKILL_NAME_PATTERN } from './skill.js';

/** The file in each skill folder that holds the skill: YAML front matter, then the prompt. */
const SKILL_FILE_NAME = 'SKILL.md';

/** What `loadSkillsFromDirectories` takes. */
export interface LoadSkillsOptions {
  /** Folders holding one sub-folder per skill, in order of precedence: the first definition of a name wins. */
  directories: readonly string[];
}

/** A file or folder that was skipped, and why. */
export interface SkillLoadProblem {
  path: string;
  message: string;
}

/** What `loadSkillsFromDirectories` resolves to. */
export interface LoadedSkills {
  skills: SkillDefinition[];
  problems: SkillLoadProblem[];
}

/** A skill file's parts: its front matter text and its body, or why it has none. */
type SplitFile = { ok: true; frontMatter: string; body: string } | { ok: false; message: string };

/** Splits `---` front matter (first line) up to the next `---` or `...` line from the body. */
function splitFrontMatter(text: string): SplitFile {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---') {
    return {
      ok: false,
      message: 'no front matter: the file must start with a `---` line, then YAML, then `---`',
    };
  }
  const end = lines.findIndex(
    (line, index) => index > 0 && (line.trimEnd() === '---' || line.trimEnd() === '...'),
  );
  if (end === -1)
    return { ok: false, message: 'the front matter is not closed: add a `---` line after the YAML' };
  return {
    ok: true,
    frontMatter: lines.slice(1, end).join('\n'),
    body: lines
      .slice(end + 1)
      .join('\n')
      .trim(),
  };
}

/** A YAML error's message with its position as a line and column of the whole file (front matter starts on line 2). */
function describeYamlError(error: unknown, frontMatter: string): string {
  if (!(error instanceof YAMLError)) return error instanceof Error ? error.message : String(error);
  const offset = error.pos[0];
  const before = frontMatter.slice(0, offset);
  const line = before.split('\n').length + 1;
  const column = offset - before.lastIndexOf('\n');
  return `${error.message} (line ${line}, column ${column})`;
}

/** Turns front matter and body into a definition, or says what is wrong with them. */
function toSkill(
  frontMatter: string,
  body: string,
): { ok: true; skill: SkillDefinition } | { ok: false; message: string } {
  let data: unknown;
  try {
    data = parse(frontMatter, { prettyErrors: false });
  } catch (error) {
    return { ok: false, message: `invalid YAML front matter: ${describeYamlError(error, frontMatter)}` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { ok: false, message: 'the front matter must be a YAML mapping with name and description' };
  }
  const fields = data as Record<string, unknown>;
  const { name, description } = fields;
  if (name === undefined) return { ok: false, message: 'the front matter has no `name`' };
  if (typeof name !== 'string' || !SKILL_NAME_PATTERN.test(name)) {
    return {
      ok: false,
      message: `name ${JSON.stringify(name)} must be 1 to 64 letters, digits, '_' or '-' (${SKILL_NAME_PATTERN.source})`,
    };
  }
  if (typeof description !== 'string' || description.trim() === '') {
    return {
      ok: false,
      message: 'the front matter needs a `description`: a non-empty string saying when to use the skill',
    };
  }
  const skill: SkillDefinition = { name, description: description.trim(), prompt: body };
  const displayName = fields.display_name;
  if (displayName !== undefined && displayName !== null) {
    if (typeof displayName !== 'string') return { ok: false, message: '`display_name` must be a string' };
    skill.displayName = displayName;
  }
  const implicit = fields.allow_implicit_invocation;
  if (implicit !== undefined && implicit !== null) {
    if (typeof implicit !== 'boolean') {
      return { ok: false, message: '`allow_implicit_invocation` must be true or false' };
    }
    skill.allowImplicitInvocation = implicit;
  }
  const required = fields.required_tools;
  if (required !== undefined && required !== null) {
    if (!Array.isArray(required) || required.some((tool) => typeof tool !== 'string' || tool === '')) {
      return { ok: false, message: '`required_tools` must be a list of tool names' };
    }
    skill.requiredTools = [...(required as string[])];
  }
  if (body === '')
    return { ok: false, message: 'the skill has no prompt: write its instructions after the front matter' };
  return { ok: true, skill };
}

/** The sub-folders of a skills directory (symlinks to folders included), by name; undefined when it does not exist. */
async function skillFolders(directory: string, problems: SkillLoadProblem[]): Promise<string[] | undefined> {
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT') return undefined;
    const message =
      code === 'ENOTDIR'
        ? 'is not a directory: a skills directory holds one folder per skill'
        : `cannot be read: ${error instanceof Error ? error.message : String(error)}`;
    problems.push({ path: directory, message });
    return undefined;
  }
  const folders: string[] = [];
  for (const entry of entries) {
    // Hidden entries are editor and VCS litter, never skills.
    if (entry.name.startsWith('.')) continue;
    const folder = path.join(directory, entry.name);
    if (entry.isDirectory()) folders.push(folder);
    else if (
      entry.isSymbolicLink() &&
      (await stat(folder).then(
        (stats) => stats.isDirectory(),
        () => false,
      ))
    ) {
      folders.push(folder);
    }
  }
  return folders.sort();
}

/**
 * Loads skills from disk: each directory holds skill folders, each with a SKILL.md whose YAML front matter gives
 * `name`, `description` and optionally `display_name`, `allow_implicit_invocation` and `required_tools`, and
 * whose body is the prompt. A file that cannot be used is reported in `problems` and skipped; a directory that
 * does not exist is empty. When a name is defined twice, the first definition (earlier directory, then folder
 * name order) wins and the later one is a problem. Never rejects.
 */
export async function loadSkillsFromDirectories(options: LoadSkillsOptions): Promise<LoadedSkills> {
  const skills: SkillDefinition[] = [];
  const problems: SkillLoadProblem[] = [];
  const definedAt = new Map<string, string>();
  for (const directory of options.directories) {
    const folders = await skillFolders(directory, problems);
    for (const folder of folders ?? []) {
      const file = path.join(folder, SKILL_FILE_NAME);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        problems.push(
          code === 'ENOENT'
            ? { path: folder, message: `no ${SKILL_FILE_NAME} in this skill folder` }
            : {
                path: file,
                message: `cannot be read: ${error instanceof Error ? error.message : String(error)}`,
              },
        );
        continue;
      }
      const split = splitFrontMatter(text);
      const parsed = split.ok ? toSkill(split.frontMatter, split.body) : split;
      if (!parsed.ok) {
        problems.push({ path: file, message: parsed.message });
        continue;
      }
      const earlier = definedAt.get(parsed.skill.name);
      if (earlier !== undefined) {
        problems.push({
          path: file,
          message: `skill '${parsed.skill.name}' is already defined by ${earlier}; this definition is ignored`,
        });
        continue;
      }
      definedAt.set(parsed.skill.name, file);
      skills.push(parsed.skill);
    }
  }
  return { skills, problems };
}
