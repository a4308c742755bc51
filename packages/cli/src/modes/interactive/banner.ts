import type { Message, Session } from '@youyou/agent';
import type { Styles } from '../../chat/format.js';
import type { CliRuntime } from '../../runtime/setup.js';
import { packageVersion } from '../../runtime/version.js';
import { shortId } from '../../sessions/workspace-sessions.js';
import { countOf } from '../../text/plural.js';
import { neutralize, neutralizeLine } from '../../text/terminal-text.js';

/** The chat's first lines: the version, the model and where it runs, the sandbox, the keys. */
export function bannerText(options: { runtime: CliRuntime; cwd: string; styles: Styles }): string {
  const { runtime, styles } = options;
  const { provider, sandbox } = runtime;
  const where = provider.baseURL === undefined ? provider.name : provider.baseURL;
  return [
    `${styles.bold('youyou')} ${packageVersion()} ${styles.dim(`· ${neutralizeLine(`${provider.modelId} via ${where} · ${options.cwd}`)}`)}\n`,
    sandbox.mode === 'danger-full-access'
      ? styles.yellow('sandbox: danger-full-access · shell commands run unconfined, with network\n')
      : styles.dim(`sandbox: ${sandbox.mode} · network ${sandbox.network ? 'on' : 'off'}\n`),
    styles.dim('/help for commands · Ctrl-C cancels a turn · Ctrl-D exits\n'),
  ].join('');
}

/** Where a resumed session stood: its short id, its stored message count and its last four exchanges. */
export function resumedText(options: { session: Session; messageCount: number; styles: Styles }): string {
  const { session, styles } = options;
  const textOf = (message: Message): string =>
    'content' in message && Array.isArray(message.content)
      ? message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
      : '';
  const shown = session
    .messages()
    .filter(
      (message) => (message.type === 'user' || message.type === 'assistant') && textOf(message).trim() !== '',
    );
  const lines = [
    styles.dim(`Resumed session ${shortId(session.id)} · ${countOf(options.messageCount, 'message')}\n`),
  ];
  for (const message of shown.slice(-4)) {
    const rows = textOf(message).trim().split('\n');
    const text = neutralize(rows.length > 6 ? `${rows.slice(0, 6).join('\n')}\n…` : rows.join('\n'));
    const prefix = message.type === 'user' ? styles.cyan('› ') : '';
    lines.push(`${prefix}${message.type === 'user' ? text : styles.dim(text)}\n`);
  }
  return lines.join('');
}
