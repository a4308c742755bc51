/** `youyou mcp login NAME` and `youyou mcp logout NAME`: the OAuth login of an HTTP MCP server of config.json. */
import { randomBytes } from 'node:crypto';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens,
} from '@youyou/mcp';
import type { CliSettings } from '../../config/config.js';
import type { CliIo } from '../../runtime/cli-io.js';
import {
  clientMetadataFor,
  deleteLogin,
  loginFile,
  type McpLogin,
  readLogin,
  writeLogin,
} from '../../runtime/mcp-auth.js';
import { CommandError } from '../../sessions/workspace-sessions.js';
import { neutralizeLine } from '../../text/terminal-text.js';
import { openInBrowser } from './browser.js';
import { listenForCallback } from './callback.js';
import { revokeLogin } from './revoke.js';

/** How long the login waits for the browser to come back. */
const CALLBACK_TIMEOUT_MS = 5 * 60_000;

/** The provider of one login: everything in memory until the flow has succeeded, then written at once. */
class LoginProvider implements OAuthClientProvider {
  readonly redirectUrl: string;
  readonly clientMetadata: OAuthClientMetadata;
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  discovery: OAuthDiscoveryState | undefined;
  readonly #state: string;
  readonly #onAuthorizationUrl: (url: URL) => void;
  #verifier = '';

  constructor(options: {
    redirectUrl: string;
    state: string;
    previous: OAuthClientInformationMixed | undefined;
    onAuthorizationUrl: (url: URL) => void;
  }) {
    this.redirectUrl = options.redirectUrl;
    this.clientMetadata = clientMetadataFor(options.redirectUrl);
    this.#state = options.state;
    this.#onAuthorizationUrl = options.onAuthorizationUrl;
    // The earlier registration serves only if it allows this run's redirect URL (its port is new each time).
    const previous = options.previous;
    const uris = previous !== undefined && 'redirect_uris' in previous ? previous.redirect_uris : [];
    this.client = uris.includes(options.redirectUrl) ? previous : undefined;
  }

  state(): string {
    return this.#state;
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }
  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.client = client;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.#onAuthorizationUrl(url);
  }
  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }
  codeVerifier(): string {
    return this.#verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }
}

/** The login file of `name`, refusing a name that could leave the folder. */
function fileOf(settings: CliSettings, name: string): string {
  try {
    return loginFile(settings.home, name);
  } catch (error) {
    throw new CommandError(error instanceof Error ? error.message : String(error));
  }
}

/** The URL of HTTP server `name` of the config, or a CommandError saying why it cannot log in. */
function serverUrlOf(settings: CliSettings, name: string): string {
  const server = Object.hasOwn(settings.mcpServers, name) ? settings.mcpServers[name] : undefined;
  const shown = JSON.stringify(name);
  if (server === undefined) {
    throw new CommandError(`there is no MCP server ${shown} in ${settings.configPath} (mcpServers)`);
  }
  if (!('url' in server)) {
    throw new CommandError(`MCP server ${shown} is a command (stdio): only HTTP servers log in`);
  }
  if (Object.keys(server.headers ?? {}).some((header) => header.toLowerCase() === 'authorization')) {
    throw new CommandError(
      `MCP server ${shown} has an Authorization header in ${settings.configPath}; remove it to use a login instead`,
    );
  }
  return server.url;
}

/** The loopback port of an earlier redirect URL, if it was one of ours. */
function portOf(redirectUrl: string | undefined): number | undefined {
  if (redirectUrl === undefined || !URL.canParse(redirectUrl)) return undefined;
  const url = new URL(redirectUrl);
  const port = Number(url.port);
  return url.hostname === '127.0.0.1' && Number.isInteger(port) && port > 0 ? port : undefined;
}

/** Runs the login of HTTP server `name`; resolves with the exit code. */
export async function runMcpLogin(options: {
  settings: CliSettings;
  name: string;
  io: CliIo;
  /** Abandons the wait for the browser (the chat's Ctrl-C): rejects with a CommandError, nothing saved. */
  signal?: AbortSignal;
}): Promise<number> {
  const { settings, name, io } = options;
  const serverUrl = serverUrlOf(settings, name);
  const file = fileOf(settings, name);
  let previous: McpLogin | undefined;
  try {
    previous = readLogin(file);
  } catch {
    previous = undefined; // a damaged file is replaced by this login
  }
  const state = randomBytes(24).toString('base64url');
  const sameServer = previous?.serverUrl === serverUrl ? previous : undefined;
  const listener = await listenForCallback({
    expectedState: state,
    timeoutMs: CALLBACK_TIMEOUT_MS,
    preferredPort: portOf(sameServer?.redirectUrl),
  });
  const shown = neutralizeLine(name);
  const stop = (): void => listener.close();
  options.signal?.addEventListener('abort', stop, { once: true });
  const provider = new LoginProvider({
    redirectUrl: listener.redirectUrl,
    state,
    previous: sameServer?.client,
    onAuthorizationUrl: (url) => {
      const opened = openInBrowser(url, io.env);
      io.stdout.write(
        `To log in to MCP server "${shown}", open this URL in a browser${opened ? ' (opened in yours)' : ''}:\n\n` +
          `  ${neutralizeLine(url.href)}\n\nWaiting for the browser to come back to ${listener.redirectUrl} …\n`,
      );
    },
  });
  const { authorizeMcpServer } = await import('@youyou/mcp');
  try {
    const outcome = await authorizeMcpServer({
      url: serverUrl,
      provider,
      waitForCode: () =>
        listener.code.catch((error: unknown) => {
          throw new CommandError(
            `the login of MCP server "${shown}" did not finish: ${error instanceof Error ? error.message : String(error)}; run youyou mcp login ${shown} to try again`,
          );
        }),
    });
    if (outcome === 'not-required') {
      io.stdout.write(`MCP server "${shown}" does not ask for a login: nothing to do.\n`);
      return 0;
    }
  } finally {
    options.signal?.removeEventListener('abort', stop);
    listener.close();
  }
  if (provider.saved === undefined || provider.client === undefined) {
    throw new CommandError(`the login of MCP server "${shown}" gave no tokens`);
  }
  writeLogin(file, {
    version: 1,
    serverUrl,
    redirectUrl: listener.redirectUrl,
    client: provider.client,
    tokens: provider.saved,
    ...(provider.discovery === undefined ? {} : { discovery: provider.discovery }),
  });
  io.stdout.write(`Logged in to MCP server "${shown}"; the login is saved in ${file}.\n`);
  return 0;
}

/**
 * Revokes the saved login of server `name` at its authorization server when that offers revocation, then
 * deletes it (whether or not the revocation worked: the user asked for the file to go); resolves with 0.
 */
export async function runMcpLogout(options: {
  settings: CliSettings;
  name: string;
  io: CliIo;
}): Promise<number> {
  const { settings, name, io } = options;
  const file = fileOf(settings, name);
  const shown = neutralizeLine(name);
  let login: McpLogin | undefined;
  try {
    login = readLogin(file);
  } catch {
    login = undefined; // damaged: nothing to revoke with, but still deleted below
  }
  const revocation = login === undefined ? undefined : await revokeLogin(login);
  if (!deleteLogin(file)) {
    io.stdout.write(`MCP server "${shown}" has no saved login.\n`);
    return 0;
  }
  const revoked =
    revocation === undefined
      ? 'it could not be read, so nothing was revoked'
      : revocation.revoked
        ? 'the tokens were revoked at the authorization server'
        : `the tokens were not revoked: ${neutralizeLine(revocation.reason)}`;
  io.stdout.write(`Logged out of MCP server "${shown}" (deleted ${file}; ${revoked}).\n`);
  return 0;
}
