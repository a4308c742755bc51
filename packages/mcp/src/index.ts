/**
 * @youyou/mcp — MCP servers (stdio and Streamable HTTP) as YouYou Agent tools. `connectMcpServer` lists a
 * server's tools as ToolHandlers named `${server}__${tool}`; see the README for the config shape.
 */
/** The MCP SDK's OAuth client provider (an HTTP transport's `authProvider`) and the values it stores. */
export type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
export type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
export { type AuthorizeOptions, type AuthorizeOutcome, authorizeMcpServer } from './authorize.js';
export {
  DEFAULT_TIMEOUT_MS,
  type McpHttpTransportConfig,
  type McpServerConfig,
  type McpStdioTransportConfig,
  type McpTransportConfig,
  SERVER_NAME_PATTERN,
  validateServerConfig,
} from './config.js';
export {
  connectMcpServer,
  connectMcpServers,
  type GetPromptOptions,
  type McpClientOptions,
  type McpServerConnection,
  type McpServerSet,
} from './connect.js';
export {
  type ElicitationAnswer,
  type ElicitationField,
  type ElicitationHandler,
  type ElicitationRequest,
  type ElicitationValue,
  elicitationFields,
  fieldProblem,
  type McpCallInFlight,
} from './elicitation.js';
export type { McpListKind } from './link.js';
export { prefixedToolNames } from './naming.js';
export type { McpPrompt, McpPromptContent } from './prompts.js';
export { toToolOutput } from './result.js';
