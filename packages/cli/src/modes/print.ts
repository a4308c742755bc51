import type { AgentError, RunningTurn } from '@youyou/agent';
import { plainMessage, wantsColor } from '../chat/format.js';
import { loadMarkdownStream } from '../chat/markdown-load.js';
import { TurnView } from '../chat/render.js';
import type { CliSettings } from '../config/config.js';
import { isUnreachableError, unreachableMessage } from '../config/model-server.js';
import { checkpointStoreOf } from '../runtime/checkpoints.js';
import type { CliIo } from '../runtime/cli-io.js';
import { openHomeStorage, setUpRuntime } from '../runtime/setup.js';
import { openSession } from '../sessions/open-session.js';
import { terminalSafeJson } from '../text/terminal-text.js';

/** Exit codes of a print-mode turn. */
const EXIT = { ok: 0, failed: 1, unreachable: 2, cancelled: 130 } as const;

/**
 * `youyou -p PROMPT`: one turn. The answer goes to stdout and tool activity to stderr, or with `--json` every
 * AgentEvent as one JSON line on stdout. Mutating tools run only with --yes; without it they are denied and
 * the model is told how the user can allow them. Ctrl-C cancels the turn, a second one exits at once.
 */
export async function runPrintMode(options: {
  settings: CliSettings;
  prompt: string;
  json: boolean;
  resume: string | undefined;
  latest: boolean;
  /** With `resume`: continue in a fork of that session. */
  fork?: boolean;
  io: CliIo;
}): Promise<number> {
  const { settings, io, json } = options;
  // A claim on the session that could not be renewed is said on stderr, not on the console of a library.
  const onBackgroundError = (error: AgentError) => io.warn(plainMessage(error.message));
  const runtime = await setUpRuntime({
    settings,
    env: io.env,
    approval: settings.yes ? { type: 'allow_all' } : { type: 'deny_all' },
    warn: io.warn,
    notice: (text) => io.stderr.write(`youyou: ${text}\n`),
    onBackgroundError,
    openStorage: () => openHomeStorage({ settings, onBackgroundError }),
    checkpoints: checkpointStoreOf(settings),
  });
  let interrupted = 0;
  let cancel: (() => void) | undefined;
  const onSigint = (): void => {
    interrupted += 1;
    if (interrupted > 1) process.exit(EXIT.cancelled);
    cancel?.();
  };
  process.on('SIGINT', onSigint);
  try {
    const session = await openSession({
      runtime,
      resume: options.resume,
      latest: options.latest,
      workspace: settings.cwd,
      fork: options.fork === true,
    });
    const turn = await session.sendMessage(options.prompt, runtime.turnOptions);
    cancel = () => turn.cancel();
    if (interrupted > 0) turn.cancel();
    const baseURL = runtime.provider.baseURL;
    const view = new TurnView({
      sinks: { answer: (text) => io.stdout.write(text), activity: (text) => io.stderr.write(text) },
      live: false,
      color: io.stderrColor,
      columns: () => io.stderr.columns ?? 100,
      showReasoning: () => false,
      baseURL,
      // Markdown is rendered for a terminal only: pipes and --json get the answer exactly as it came.
      markdown: !json && wantsColor(io.stdout, io.env) ? await loadMarkdownStream(io.stdout) : undefined,
    });
    const { unreachable, limitReached } = await printEvents({ turn, view, io, json, baseURL });
    view.close();
    const { status } = await turn.done;
    if (unreachable) return EXIT.unreachable;
    if (status === 'cancelled') return EXIT.cancelled;
    return status === 'failed' || limitReached ? EXIT.failed : EXIT.ok;
  } finally {
    process.off('SIGINT', onSigint);
    // Closing the agent closes the session: SessionEnd and memory extraction run before the process ends.
    await runtime.close();
  }
}

/**
 * Writes a turn's events: drawn by `view`, or with `json` each as one JSON line on stdout (errors also said
 * on stderr). Answers whether the model server was unreachable and whether the tool-call limit was reached.
 */
async function printEvents(options: {
  turn: RunningTurn;
  view: TurnView;
  io: CliIo;
  json: boolean;
  baseURL: string | undefined;
}): Promise<{ unreachable: boolean; limitReached: boolean }> {
  const { view, io, json, baseURL } = options;
  let unreachable = false;
  let limitReached = false;
  for await (const event of options.turn) {
    const payload = event.payload;
    if (payload.type === 'error') {
      if (isUnreachableError(payload.error)) unreachable = true;
      if (payload.error.code === 'MAX_TOOL_CALLS_EXCEEDED') limitReached = true;
    }
    if (!json) {
      view.handle(event);
      continue;
    }
    io.stdout.write(`${terminalSafeJson(event)}\n`);
    if (payload.type === 'error') {
      const text =
        isUnreachableError(payload.error) && baseURL !== undefined
          ? unreachableMessage(baseURL)
          : plainMessage(payload.error.message);
      io.stderr.write(`youyou: ${text}\n`);
    }
  }
  return { unreachable, limitReached };
}
