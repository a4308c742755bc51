/**
 * The public face of every entry point, listed by name: a restructure of the core moves files, never what an
 * embedder can import. The names are read from the entry files themselves (following their re-exports to the
 * declarations) and the runtime values from the loaded modules, so a name that appears or disappears fails here.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import * as main from '../src/index.js';
import * as storage from '../src/storage/index.js';
import * as testing from '../src/testing/index.js';

const sources = fileURLToPath(new URL('../src/', import.meta.url));

/** The declarations a file exports itself (`export function x`, `export interface Y`, …). */
function declaredExports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const pattern =
    /^export\s+(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\*?|const|let|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm;
  return [...text.matchAll(pattern)].map((match) => match[1] ?? '');
}

/** Every name `file` exports, re-exports followed; `export * as ns` lists `ns` and `ns.member`. */
function exportedNames(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const target = (specifier: string): string => resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
  const names = declaredExports(file);
  for (const match of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'([^']+)'/gm)) {
    for (const entry of (match[1] ?? '').split(',')) {
      const name = entry.trim().replace(/^type\s+/, '');
      if (name === '') continue;
      names.push(name.includes(' as ') ? (name.split(' as ')[1] ?? '').trim() : name);
    }
  }
  for (const match of text.matchAll(/^export\s+\*\s+from\s*'([^']+)'/gm)) {
    names.push(...exportedNames(target(match[1] ?? '')));
  }
  for (const match of text.matchAll(/^export\s+\*\s+as\s+(\w+)\s+from\s*'([^']+)'/gm)) {
    const namespace = match[1] ?? '';
    names.push(namespace, ...exportedNames(target(match[2] ?? '')).map((name) => `${namespace}.${name}`));
  }
  return [...new Set(names)].sort();
}

/** What each entry offered before the core was laid out in folders (types and values). */
const MAIN_NAMES = [
  'ACTIVATE_SKILL_TOOL_NAME',
  'Agent',
  'AgentBuilder',
  'AgentConfig',
  'AgentError',
  'AgentErrorCode',
  'AgentErrorOptions',
  'AgentEvent',
  'AgentEventPayload',
  'AgentEventType',
  'AgentToolOptions',
  'ApprovalDecision',
  'ApprovalRequest',
  'Approver',
  'Budget',
  'BudgetConfig',
  'ChatEvent',
  'ChatPurpose',
  'ChatRequest',
  'ContentBlock',
  'EnvironmentContext',
  'ForkLink',
  'ForkOptions',
  'HasProvider',
  'HookEvent',
  'HookHandler',
  'HookPayload',
  'HookResult',
  'HookTapOptions',
  'IMAGE_MAX_BYTES',
  'IMAGE_MEDIA_TYPES',
  'InMemoryMemoryStorage',
  'InMemorySessionStorage',
  'InterruptedTurn',
  'JsonSchema',
  'LoadSkillsOptions',
  'LoadedSkills',
  'Memory',
  'MemoryStorage',
  'Message',
  'MessageStatus',
  'ModelCallAnswerData',
  'ModelCallOutcome',
  'ModelCallRequestData',
  'ModelCapabilities',
  'ModelInfo',
  'ModelPricing',
  'ModelProvider',
  'NoProvider',
  'Observation',
  'ObserveOptions',
  'Observer',
  'OutputInvalidError',
  'OutputOptions',
  'PendingToolCall',
  'Personality',
  'Plugin',
  'PluginContext',
  'ResponseFormat',
  'RewindOptions',
  'RunningTurn',
  'SendMessageOptions',
  'Session',
  'SessionClaim',
  'SessionConfig',
  'SessionEvent',
  'SessionEventPayload',
  'SessionPage',
  'SessionSnapshot',
  'SessionStorage',
  'SessionSummary',
  'SessionTurn',
  'SkillDefinition',
  'SkillLoadProblem',
  'SourceComponent',
  'SubagentLink',
  'SubagentParent',
  'SubagentUsage',
  'TOOL_NAME_PATTERN',
  'TOOL_OUTPUT_LIMIT_BYTES',
  'TokenUsage',
  'ToolHandler',
  'ToolInput',
  'ToolOutput',
  'ToolSpec',
  'TurnResult',
  'TurnRunOptions',
  'TurnStatus',
  'UsageTotals',
  'UserInput',
  'agentTool',
  'forkLinksOf',
  'forkSourceOf',
  'isAgentError',
  'loadSkillsFromDirectories',
  'subagentLinksOf',
  'subagentParentOf',
  'templates',
  'templates.COMPACT_INPUT_TEMPLATE',
  'templates.COMPACT_PROMPT',
  'templates.COMPACT_SUMMARY_PREFIX',
  'templates.INTERRUPTED_MESSAGE_NOTICE',
  'templates.MEMORY_CONSOLIDATION_INPUT_TEMPLATE',
  'templates.MEMORY_CONSOLIDATION_PROMPT',
  'templates.MEMORY_EXTRACTION_INPUT_TEMPLATE',
  'templates.MEMORY_EXTRACTION_PROMPT',
  'templates.MEMORY_INSTRUCTIONS',
  'templates.PLUGIN_SECTION_HEADER',
  'templates.SKILL_SECTION_HEADER',
  'templates.SKILL_USAGE_RULES',
  'templates.TOOL_LIMIT_NOTICE',
  'templates.fillTemplate',
  'usageCost',
  'usageTotalsOfLog',
];
const STORAGE_NAMES = [
  'EncodedValue',
  'SessionCursorPosition',
  'checkMemory',
  'checkPageLimit',
  'checkSessionEvent',
  'checkSessionId',
  'decodeSessionCursor',
  'decodeStoredValue',
  'encodeSessionCursor',
  'encodeStoredValue',
  'messageTextOf',
  'searchWordsOf',
  'sessionTitleOf',
];
const TESTING_NAMES = [
  'ConformanceAgent',
  'ConformanceAgentFactory',
  'ConformanceSession',
  'ConformanceTestApi',
  'InMemoryMemoryStorage',
  'InMemorySessionStorage',
  'MemoryStorageConformanceOptions',
  'ScriptStep',
  'ScriptedModelProvider',
  'ScriptedModelProviderOptions',
  'ScriptedResponse',
  'SessionStorageConformanceOptions',
  'StopReason',
  'StorageFactory',
  'defineMemoryStorageConformance',
  'defineSessionStorageConformance',
  'requestTokens',
  'scriptedModel',
];

/** Of those, the values an embedder gets at run time (the rest are types). */
const MAIN_VALUES = [
  'ACTIVATE_SKILL_TOOL_NAME',
  'Agent',
  'AgentBuilder',
  'AgentError',
  'IMAGE_MAX_BYTES',
  'IMAGE_MEDIA_TYPES',
  'InMemoryMemoryStorage',
  'InMemorySessionStorage',
  'OutputInvalidError',
  'RunningTurn',
  'Session',
  'TOOL_NAME_PATTERN',
  'TOOL_OUTPUT_LIMIT_BYTES',
  'agentTool',
  'forkLinksOf',
  'forkSourceOf',
  'isAgentError',
  'loadSkillsFromDirectories',
  'subagentLinksOf',
  'subagentParentOf',
  'templates',
  'usageCost',
  'usageTotalsOfLog',
];
const STORAGE_VALUES = [
  'checkMemory',
  'checkPageLimit',
  'checkSessionEvent',
  'checkSessionId',
  'decodeSessionCursor',
  'decodeStoredValue',
  'encodeSessionCursor',
  'encodeStoredValue',
  'messageTextOf',
  'searchWordsOf',
  'sessionTitleOf',
];
const TESTING_VALUES = [
  'InMemoryMemoryStorage',
  'InMemorySessionStorage',
  'ScriptedModelProvider',
  'defineMemoryStorageConformance',
  'defineSessionStorageConformance',
  'requestTokens',
  'scriptedModel',
];

test('@youyou/agent exports the same names, types and values', () => {
  expect(exportedNames(`${sources}index.ts`)).toEqual(MAIN_NAMES);
  expect(Object.keys(main).sort()).toEqual(MAIN_VALUES);
  expect(Object.keys(main.templates).sort()).toEqual(
    MAIN_NAMES.filter((name) => name.startsWith('templates.')).map((name) => name.slice('templates.'.length)),
  );
});

test('@youyou/agent/storage exports the same names, types and values', () => {
  expect(exportedNames(`${sources}storage/index.ts`)).toEqual(STORAGE_NAMES);
  expect(Object.keys(storage).sort()).toEqual(STORAGE_VALUES);
});

test('@youyou/agent/testing exports the same names, types and values', () => {
  expect(exportedNames(`${sources}testing/index.ts`)).toEqual(TESTING_NAMES);
  expect(Object.keys(testing).sort()).toEqual(TESTING_VALUES);
});
