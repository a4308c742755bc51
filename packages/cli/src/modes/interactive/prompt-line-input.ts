import type { ToolOutput } from '@youyou/agent';
import type { Styles } from '../../chat/format.js';
import type { CliSettings } from '../../config/config.js';
import type { CliRuntime } from '../../runtime/setup.js';
import { bangContextBlock, bangScreenText, runBangCommand } from './bang-command.js';
import { promptMessage } from './mcp-prompts.js';
import { attachMentions, completeMention, type MentionScope, mentionNotesText } from './mentions.js';
import type { TurnOutcome, TurnRunner } from './turn-runner.js';

/**
 * What a typed line becomes besides a slash command: `@path` mentions (completed and attached), `!command`
 * runs whose output waits for the next message, and MCP `/server:prompt` turns.
 */
export class PromptLineInput {
  readonly #runtime: CliRuntime;
  readonly #settings: CliSettings;
  readonly #styles: Styles;
  readonly #runner: TurnRunner;
  readonly #write: (text: string) => void;
  /** `!command` blocks waiting for the next message. */
  readonly #commandOutputs: string[] = [];

  constructor(options: {
    runtime: CliRuntime;
    settings: CliSettings;
    styles: Styles;
    runner: TurnRunner;
    write: (text: string) => void;
  }) {
    this.#runtime = options.runtime;
    this.#settings = options.settings;
    this.#styles = options.styles;
    this.#runner = options.runner;
    this.#write = options.write;
  }

  /** The prompt's Tab completion of an `@path` word. */
  complete(word: string): ReturnType<typeof completeMention> {
    return completeMention(this.#mentionScope(), word);
  }

  /** What the model gets for a typed message: the `!command` outputs kept for it, then the text, then @files. */
  async messageOf(text: string): Promise<string> {
    const attached = await attachMentions(this.#mentionScope(), text);
    this.#write(mentionNotesText(attached.notes, this.#styles));
    const commands = this.#commandOutputs.splice(0);
    return commands.length === 0 ? attached.text : `${commands.join('\n\n')}\n\n${attached.text}`;
  }

  #mentionScope(): MentionScope {
    return {
      root: this.#settings.cwd,
      hiddenPaths: this.#settings.sandbox.hiddenPaths,
      rules: this.#settings.approvalRules,
      tools: this.#runtime.tools,
    };
  }

  /** `!command`: runs it in the shell's sandbox, shows its output and keeps it for the next message. */
  async bang(command: string): Promise<void> {
    const controller = new AbortController();
    let output: ToolOutput = { content: '', isError: false };
    await this.#runner.withStatus(
      `running ${command}`,
      async () => {
        output = await runBangCommand({
          tools: this.#runtime.tools,
          command,
          sessionId: this.#runner.session?.id,
          signal: controller.signal,
        });
      },
      () => controller.abort(),
    );
    this.#write(bangScreenText(output, this.#styles));
    this.#commandOutputs.push(bangContextBlock(command, output));
  }

  /** `/server:prompt …` (a match of MCP_PROMPT_COMMAND): a turn whose user message is the prompt as its server fills it in. */
  async promptTurn(command: RegExpExecArray): Promise<TurnOutcome> {
    const message = await promptMessage({
      servers: this.#runtime.mcpServers,
      server: command[1] ?? '',
      prompt: command[2] ?? '',
      argumentLine: command[3] ?? '',
    });
    if ('problem' in message) {
      this.#write(this.#styles.red(`${message.problem}\n`));
      return 'done';
    }
    return this.#runner.run('', (session) => session.sendMessage(message, this.#runtime.turnOptions));
  }
}
