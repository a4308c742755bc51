import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TenantApp } from '../http/context.js';
import { errorResponse, HttpError } from '../http/errors.js';

/**
 * The web chat page this package ships (`web-chat/` next to `src/` and `dist/`, listed in "files"), so
 * any host of the server, `youyou serve` included, can serve it without a copy of the repository.
 */
export const WEB_CHAT_FOLDER: string = fileURLToPath(new URL('../../web-chat/', import.meta.url));

/** Where the web chat's files are: the package's own copy unless `folder` names another (a customised copy). */
export interface WebChatOptions {
  /** A folder holding `index.html` and the page's scripts and styles; default `WEB_CHAT_FOLDER`. */
  folder?: string;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  png: 'image/png',
  svg: 'image/svg+xml',
};

// A plain file name with a known type: no folder part, so nothing outside the folder can be named.
const FILE_NAME = /^[A-Za-z0-9_-]+\.(html|js|css|png|svg)$/;

// The page only loads its own files and talks to its own origin; injected markup could run nothing.
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/**
 * The libraries the page imports, each served at a fixed URL (`/web-chat/vendor/<name>`) from this package's
 * own dependencies (pinned in package.json): no build step, no CDN, and the strict CSP still holds.
 */
const VENDOR_FILES: Record<string, { packageName: string; file: string }> = {
  'marked.js': { packageName: 'marked', file: 'lib/marked.esm.js' },
  'purify.js': { packageName: 'dompurify', file: 'dist/purify.es.mjs' },
  'highlight.js': { packageName: '@highlightjs/cdn-assets', file: 'es/highlight.min.js' },
};

/** The folder of an installed package, looked up the way Node does: `node_modules` in this file's parents. */
function packageFolder(packageName: string): string | undefined {
  for (let folder = fileURLToPath(new URL('.', import.meta.url)); ; folder = dirname(folder)) {
    const candidate = join(folder, 'node_modules', packageName);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(folder) === folder) return undefined;
  }
}

/**
 * Serves the web chat without a token (the page asks for one and sends it on each API call): `GET /`
 * answers its `index.html`, `GET /web-chat/<file>` the other files of the folder. Mounted before the auth
 * middleware, so these are the only routes that need no token.
 */
export function mountWebChat(app: TenantApp, options: WebChatOptions): void {
  const folder = resolve(options.folder ?? WEB_CHAT_FOLDER);
  const serve = async (name: string): Promise<Response> => {
    const match = FILE_NAME.exec(name);
    const type = match?.[1] === undefined ? undefined : TYPES[match[1]];
    let body: Buffer | undefined;
    if (type !== undefined) body = await readFile(join(folder, name)).catch(() => undefined);
    if (type === undefined || body === undefined) {
      throw new HttpError({ status: 404, code: 'NOT_FOUND', message: 'no such file of the web chat' });
    }
    return new Response(new Uint8Array(body), { headers: { 'content-type': type, ...SECURITY_HEADERS } });
  };
  const serveVendor = async (name: string): Promise<Response> => {
    const entry = Object.hasOwn(VENDOR_FILES, name) ? VENDOR_FILES[name] : undefined;
    const packagePath = entry === undefined ? undefined : packageFolder(entry.packageName);
    const body =
      entry === undefined || packagePath === undefined
        ? undefined
        : await readFile(join(packagePath, entry.file)).catch(() => undefined);
    if (body === undefined) {
      throw new HttpError({ status: 404, code: 'NOT_FOUND', message: 'no such library of the web chat' });
    }
    return new Response(new Uint8Array(body), {
      headers: { 'content-type': TYPES.js ?? '', ...SECURITY_HEADERS },
    });
  };
  app.get('/', async (context) => serve('index.html').catch((error) => errorResponse(context, error)));
  app.get('/web-chat/:name', async (context) =>
    serve(context.req.param('name')).catch((error) => errorResponse(context, error)),
  );
  app.get('/web-chat/vendor/:name', async (context) =>
    serveVendor(context.req.param('name')).catch((error) => errorResponse(context, error)),
  );
}
