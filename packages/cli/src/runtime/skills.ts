import { homedir } from 'node:os';
import path from 'node:path';
import { loadSkillsFromDirectories, type SkillDefinition, type ToolHandler } from '@youyou/agent';
import type { CliSettings } from '../config/config.js';

/** Skills whose required tools are missing, or whose name is taken, are left out with a warning. */
function usableSkills(options: {
  skills: readonly SkillDefinition[];
  toolNames: ReadonlySet<string>;
  warn: (text: string) => void;
}): SkillDefinition[] {
  const seen = new Set<string>();
  const usable: SkillDefinition[] = [];
  for (const skill of options.skills) {
    if (seen.has(skill.name)) {
      options.warn(
        `skill '${skill.name}' is defined more than once; the first one (workspace before home) is used`,
      );
      continue;
    }
    const missing = (skill.requiredTools ?? []).filter((tool) => !options.toolNames.has(tool));
    if (missing.length > 0) {
      options.warn(
        `skill '${skill.name}' skipped: it needs the tool(s) ${missing.join(', ')}, which are not available`,
      );
      continue;
    }
    seen.add(skill.name);
    usable.push(skill);
  }
  return usable;
}

/** The skills of the workspace's and the home's skill folders that the tools can serve; problems are warnings. */
export async function loadSkills(options: {
  settings: CliSettings;
  tools: readonly ToolHandler[];
  warn: (text: string) => void;
}): Promise<SkillDefinition[]> {
  const { settings, warn } = options;
  const loaded = await loadSkillsFromDirectories({
    directories: [
      path.join(settings.cwd, '.youyou', 'skills'),
      // Agent Skills' shared locations, read by other agents too.
      path.join(settings.cwd, '.agents', 'skills'),
      path.join(settings.home, 'skills'),
      path.join(homedir(), '.agents', 'skills'),
    ],
  });
  for (const problem of loaded.problems) warn(`skill ${problem.path}: ${problem.message}`);
  return usableSkills({
    skills: loaded.skills,
    toolNames: new Set(options.tools.map((tool) => tool.name)),
    warn,
  });
}
