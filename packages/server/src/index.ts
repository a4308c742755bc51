export {
  createServer,
  type ServerCors,
  type ServerLimits,
  type ServerOptions,
  type YouyouServer,
} from './app.js';
export type { ServerAuth } from './auth.js';
export type { ErrorBody } from './errors.js';
export { TENANT_METADATA_KEY, tenantMemoryNamespace } from './hub.js';
export { type Listenable, type ListeningServer, listen } from './listen.js';
export { eventLogOf, type LoggedSessionEvent, type SessionEventLog } from './log-tail.js';
export { WEB_CHAT_FOLDER, type WebChatOptions } from './web-chat.js';
