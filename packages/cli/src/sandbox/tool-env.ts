/**
 * The environment tools and MCP servers get: built from an allowlist of this process's variables, never
 * by removing what looks secret from everything.
 */

/** Variables passed on by name. */
const ALLOWED_NAMES = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'TZ',
  'TMPDIR',
  'EDITOR',
  'VISUAL',
  'PAGER',
]);

/** Variables passed on by prefix (the locale's categories). */
const ALLOWED_PREFIXES = ['LC_'];

/** Name fragments of credentials: never passed on, whatever the config says. */
const SECRET_FRAGMENTS = /KEY|TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|COOKIE|AUTHORIZATION|(^|_)AUTH(_|$)/;

/** Prefixes of the variables model providers and clouds read: never passed on either. */
const PROVIDER_PREFIXES = [
  'OPENAI_',
  'ANTHROPIC_',
  'YOUYOU_',
  'AZURE_',
  'AWS_',
  'GOOGLE_',
  'GEMINI_',
  'VERTEX_',
  'MISTRAL_',
  'GROQ_',
  'COHERE_',
  'DEEPSEEK_',
  'XAI_',
  'OPENROUTER_',
  'TOGETHER_',
  'FIREWORKS_',
  'HF_',
  'HUGGING_FACE_',
  'HUGGINGFACE_',
  'REPLICATE_',
  'PERPLEXITY_',
  'OLLAMA_',
  'GITHUB_',
  'GH_',
  'GITLAB_',
  'NPM_',
];

/** True for a variable that must never reach a tool or an MCP server from this process's environment. */
export function isSecretName(name: string): boolean {
  const upper = name.toUpperCase();
  return SECRET_FRAGMENTS.test(upper) || PROVIDER_PREFIXES.some((prefix) => upper.startsWith(prefix));
}

/** True for a variable of the allowlist. */
function isAllowedName(name: string): boolean {
  return ALLOWED_NAMES.has(name) || ALLOWED_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** Names in `names` that may not be passed on (for a warning when the config asks for them). */
export function refusedNames(names: readonly string[]): string[] {
  return names.filter(isSecretName);
}

/**
 * The environment of a tool: the allowlisted variables of `env` plus those `pass` names (the config's
 * `passEnv`), minus every name that looks like a credential or a provider's setting.
 */
export function toolEnvironment(options: {
  env: Readonly<Record<string, string | undefined>>;
  pass?: readonly string[];
}): Record<string, string> {
  const extra = new Set(options.pass ?? []);
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.env)) {
    if (value === undefined || isSecretName(name)) continue;
    if (isAllowedName(name) || extra.has(name)) result[name] = value;
  }
  return result;
}
