export {
  createServer,
  type ServerCors,
  type ServerLimits,
  type ServerOptions,
  type YouyouServer,
} from './app.js';
export { type ServerAuth, type TokenResolver, tokenResolver } from './http/auth.js';
export type { ErrorBody } from './http/errors.js';
export { type Listenable, type ListeningServer, listen } from './http/listen.js';
export { WEB_CHAT_FOLDER, type WebChatOptions } from './routes/web-chat.js';
export { eventLogOf, type LoggedSessionEvent, type SessionEventLog } from './sessions/event-log.js';
export {
  type AnswerOutcome,
  type ElicitationSettledReason,
  type ElicitationValue,
  type HeldElicitationAnswer,
  type HeldElicitationChange,
  HeldElicitations,
  type HeldElicitationView,
  type HoldElicitationOptions,
} from './sessions/held-elicitations.js';
export type { JournalEvent, ServerEventPayload } from './sessions/journal.js';
export { TENANT_METADATA_KEY, tenantMemoryNamespace } from './sessions/tenants.js';
