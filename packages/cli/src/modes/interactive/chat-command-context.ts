import type { Session } from '@youyou/agent';
import type { Styles } from '../../chat/format.js';
import type { Terminal } from '../../chat/terminal.js';
import type { CliSettings } from '../../config/config.js';
import type { CliRuntime } from '../../runtime/setup.js';
import type { ChatCommandContext } from './slash-commands.js';
import type { TurnRunner } from './turn-runner.js';

/** What the slash commands see of the chat: its runtime, terminal and turn runner, and how to end its loop. */
export function chatCommandContext(chat: {
  runtime: CliRuntime;
  settings: CliSettings;
  terminal: Terminal;
  styles: Styles;
  color: boolean;
  runner: TurnRunner;
  /** Makes `session` the chat's session and shows where it stood. */
  showResumed: (session: Session, messageCount: number) => void;
  /** Ends the chat's loop once the command is done. */
  leave: () => void;
}): ChatCommandContext {
  const { runtime, settings, terminal, runner } = chat;
  return {
    runtime,
    workspace: settings.cwd,
    color: chat.color,
    styles: chat.styles,
    columns: () => terminal.columns,
    write: (text) => terminal.output.write(text),
    session: () => runner.session,
    closeSession: () => runner.closeSession(),
    showResumed: chat.showResumed,
    withStatus: (status, work) => runner.withStatus(status, work),
    toggleReasoning: () => runner.toggleReasoning(),
    leave: chat.leave,
    settings,
    confirm: async (question) => {
      const answer = await terminal.readLine(question);
      return answer.type === 'line' && /^\s*y(es)?\s*$/i.test(answer.text);
    },
    runTurn: async (text) => {
      const { outcome, answer } = await runner.runForAnswer(text);
      if (outcome === 'exit') chat.leave();
      return answer;
    },
    alwaysRules: () => runner.alwaysRules,
    ask: async (prompt) => {
      const answer = await terminal.readLine(prompt, '');
      return answer.type === 'line' ? answer.text : undefined;
    },
  };
}
