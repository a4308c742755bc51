import { release } from 'node:os';
import type { CliSettings } from '../config/config.js';

/** The CLI's own instructions, before those of the config file. */
export const BASE_INSTRUCTIONS = [
  "You are youyou, a coding agent in the user's terminal. You work in the workspace folder through your tools: " +
    'read files before you change them, keep changes small and focused, and run commands only when they help.',
  'Answer in plain text suited to a terminal; be brief, and say what you changed.',
];

/** Where the agent runs, for the dynamic part of the system prompt; `shell` is the one the shell tool runs. */
export function environmentContext(settings: CliSettings, shell: string) {
  const now = new Date();
  const pad = (value: number): string => String(value).padStart(2, '0');
  return {
    cwd: settings.cwd,
    platform: `${process.platform} ${release()}`,
    shell,
    date: `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`,
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  };
}
