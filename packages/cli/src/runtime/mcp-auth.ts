/**
 * The OAuth logins of MCP servers: one file per server, `YOUYOU_HOME/mcp-auth/NAME.json` (folder 0700, file
 * 0600, replaced atomically), holding the client registration and the tokens, bound to the server's URL; and
 * the auth provider a session gives @youyou/mcp, which reads that file, saves refreshed tokens to it and,
 * when only a new login helps, says to run `youyou mcp login NAME`.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens,
} from '@youyou/mcp';

/** What a login file holds. */
export interface McpLogin {
  version: 1;
  /** The MCP endpoint the login is for: a config whose url changed gets none of it. */
  serverUrl: string;
  /** The redirect URL the client was registered with. */
  redirectUrl: string;
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  discovery?: OAuthDiscoveryState;
}

/** The server names a login file may be named after (those @youyou/mcp accepts). */
const LOGIN_NAME = /^[a-zA-Z0-9_-]{1,32}$/;

/** The folder of the login files. */
export function loginFolder(home: string): string {
  return path.join(home, 'mcp-auth');
}

/**
 * The login file of server `name`, or an Error when the name could name anything but a file of that folder
 * (config names are hostile: `../config`, `a/b`, a NUL).
 */
export function loginFile(home: string, name: string): string {
  const folder = loginFolder(home);
  const file = path.join(folder, `${name}.json`);
  if (!LOGIN_NAME.test(name) || path.dirname(file) !== folder) {
    throw new Error(`${JSON.stringify(name)} is not a name an MCP server can have (a-z A-Z 0-9 _ -)`);
  }
  return file;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The login in `file`; undefined when there is none. Throws when the file is unreadable or damaged. */
export function readLogin(file: string): McpLogin | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw error;
  }
  const data: unknown = JSON.parse(text);
  if (
    !isRecord(data) ||
    data.version !== 1 ||
    typeof data.serverUrl !== 'string' ||
    typeof data.redirectUrl !== 'string'
  ) {
    throw new Error(`${file} is not a login file of this version`);
  }
  return data as unknown as McpLogin;
}

/** Writes `login` to `file` with mode 0600 through a temporary file and a rename, in a folder made 0700. */
export function writeLogin(file: string, login: McpLogin): void {
  const folder = path.dirname(file);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  if ((statSync(folder).mode & 0o077) !== 0) chmodSync(folder, 0o700);
  const temporary = path.join(folder, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(temporary, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** Deletes the login file; false when there was none. */
export function deleteLogin(file: string): boolean {
  try {
    statSync(file);
  } catch {
    return false;
  }
  rmSync(file, { force: true });
  return true;
}

/** The metadata youyou registers with: a public client (PKCE, no secret) that refreshes. */
export function clientMetadataFor(redirectUrl: string): OAuthClientMetadata {
  return {
    client_name: 'youyou',
    redirect_uris: [redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** The sentence that tells the user what to do. */
export function loginAdvice(name: string): string {
  return `run \`youyou mcp login ${name}\``;
}

/** Thrown where a session would need the user: @youyou/mcp makes its message the one line shown. */
class LoginNeeded extends Error {}

/**
 * The auth provider of one HTTP server during a session. It reads the login file on every use, so a login
 * or a refresh by another youyou process is seen at once, and saves refreshed tokens to it. It never
 * registers a client or starts an authorization: where the MCP SDK would, it throws "run youyou mcp login".
 */
export class SessionAuthProvider implements OAuthClientProvider {
  readonly #name: string;
  readonly #serverUrl: string;
  readonly #file: string;
  /** The refresh token the authorization server refused: ignored if the file still holds it. */
  #refusedRefreshToken: string | undefined;
  #refusedAccessToken: string | undefined;

  constructor(options: { home: string; name: string; serverUrl: string }) {
    this.#name = options.name;
    this.#serverUrl = options.serverUrl;
    this.#file = loginFile(options.home, options.name);
  }

  /** The file's login when it is for this server's URL. */
  #login(): McpLogin | undefined {
    let login: McpLogin | undefined;
    try {
      login = readLogin(this.#file);
    } catch (error) {
      throw new LoginNeeded(
        `its saved login cannot be read (${error instanceof Error ? error.message : String(error)}); ${loginAdvice(this.#name)}`,
      );
    }
    return login?.serverUrl === this.#serverUrl ? login : undefined;
  }

  #needLogin(): never {
    const why = this.#refusedRefreshToken === undefined ? 'not logged in' : 'the saved login was refused';
    throw new LoginNeeded(`${why}; ${loginAdvice(this.#name)}`);
  }

  get redirectUrl(): string {
    return this.#login()?.redirectUrl ?? 'http://127.0.0.1/callback';
  }

  get clientMetadata(): OAuthClientMetadata {
    return clientMetadataFor(this.redirectUrl);
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    // First thing the SDK asks once a server answered 401: with no login, there is nothing to try.
    const login = this.#login();
    if (login?.tokens === undefined) this.#needLogin();
    return login.discovery;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    const login = this.#login();
    if (login !== undefined) writeLogin(this.#file, { ...login, discovery: state });
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#login()?.client;
  }

  saveClientInformation(): void {
    this.#needLogin();
  }

  tokens(): OAuthTokens | undefined {
    const tokens = this.#login()?.tokens;
    if (tokens === undefined) return undefined;
    if (tokens.refresh_token !== undefined && tokens.refresh_token === this.#refusedRefreshToken)
      return undefined;
    if (tokens.refresh_token === undefined && tokens.access_token === this.#refusedAccessToken)
      return undefined;
    return tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    const login = this.#login();
    if (login === undefined) this.#needLogin();
    this.#refusedRefreshToken = undefined;
    this.#refusedAccessToken = undefined;
    writeLogin(this.#file, { ...login, tokens });
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope !== 'all' && scope !== 'tokens') return;
    // Only in memory: the file may meanwhile hold a newer login, and `youyou mcp login` replaces it anyway.
    const tokens = this.#login()?.tokens;
    this.#refusedRefreshToken = tokens?.refresh_token ?? '';
    this.#refusedAccessToken = tokens?.access_token;
  }

  redirectToAuthorization(): void {
    this.#needLogin();
  }

  saveCodeVerifier(): void {
    this.#needLogin();
  }

  codeVerifier(): string {
    return this.#needLogin();
  }
}
