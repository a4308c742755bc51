/**
 * What the CLI's host gives every part of the runtime before any storage opens: the shell's sandbox, the tools'
 * environment and shell, the model provider (checked reachable), and a private home folder.
 */
import type { CliSettings } from '../config/config.js';
import { findShell, type ShellSandbox } from '../sandbox/sandbox.js';
import { refusedNames, toolEnvironment } from '../sandbox/tool-env.js';
import { neutralizeLine } from '../text/terminal-text.js';
import { preparePrivateHome } from './private-home.js';
import { checkReachable, chooseProvider } from './provider.js';
import { chooseSandbox } from './shell-sandbox.js';
import { SwitchableProvider } from './switchable-provider.js';

/** What the host gives every part before any storage opens: the sandbox, the tools' environment, the model. */
export interface Host {
  shellSandbox: ShellSandbox;
  toolEnv: Record<string, string>;
  shell: string;
  models: SwitchableProvider;
}

/** The sandbox, the tools' environment and shell, the provider (reachable), and a private home folder. */
export async function prepareHost(options: {
  settings: CliSettings;
  env: NodeJS.ProcessEnv;
  warn: (text: string) => void;
}): Promise<Host> {
  const { settings, warn } = options;
  const shellSandbox = chooseSandbox({ settings, env: options.env, warn });
  const refused = refusedNames(settings.passEnv);
  if (refused.length > 0) {
    warn(
      `passEnv: ${refused.join(', ')} not passed on: names like these hold credentials and never reach tools`,
    );
  }
  const toolEnv = toolEnvironment({ env: options.env, pass: settings.passEnv });
  const shell = findShell(options.env);
  const provider = await chooseProvider(settings);
  if (provider.name === 'compatible' && provider.baseURL !== undefined)
    await checkReachable(provider.baseURL);
  const models = new SwitchableProvider(provider);
  const tightened = preparePrivateHome(settings.home);
  if (tightened.length > 0)
    warn(`others could read ${neutralizeLine(tightened.join(', '))}; made it private`);
  return { shellSandbox, toolEnv, shell, models };
}
