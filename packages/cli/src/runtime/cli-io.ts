/** The streams a run writes to, and the environment it reads. */
export interface CliIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
  /** `youyou: warning: …` on stderr. */
  warn: (text: string) => void;
  /** Colour for stderr. */
  stderrColor: boolean;
}
