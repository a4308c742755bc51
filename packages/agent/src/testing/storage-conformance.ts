import type { MemoryStorage, SessionStorage } from '../ports/storage.js';
import { deleteTests } from './conformance/memory-storage/delete.js';
import { saveTests } from './conformance/memory-storage/save.js';
import { searchTests } from './conformance/memory-storage/search.js';
import { acquireSessionTests } from './conformance/session-storage/acquire-session.js';
import {
  agentHistoryTests,
  type ConformanceAgentFactory,
} from './conformance/session-storage/agent-history.js';
import { deleteSessionTests } from './conformance/session-storage/delete-session.js';
import { findSessionTests } from './conformance/session-storage/find-session.js';
import { listSessionsTests } from './conformance/session-storage/list-sessions.js';
import { loadPayloadsTests } from './conformance/session-storage/load-payloads.js';
import { saveEventTests } from './conformance/session-storage/save-event.js';
import { saveEventsTests } from './conformance/session-storage/save-events.js';
import { turnHistoryTests } from './conformance/session-storage/turn-history.js';
import type { ConformanceTest } from './conformance/support.js';

export type {
  ConformanceAgent,
  ConformanceAgentFactory,
  ConformanceSession,
} from './conformance/session-storage/agent-history.js';

/** The one function of a test framework the suites need (vitest's, node:test's or jest's `test`). */
export interface ConformanceTestApi {
  test: (name: string, fn: () => Promise<void>) => void;
}

/** A fresh, empty storage for one test, and how to dispose of it. */
export type StorageFactory<S> = () => Promise<{ storage: S; cleanup?: () => Promise<void> }>;

/** What `defineSessionStorageConformance` takes. */
export interface SessionStorageConformanceOptions {
  api: ConformanceTestApi;
  create: StorageFactory<SessionStorage>;
  /**
   * Builds an Agent on a storage (`new AgentBuilder(...)...build()`): given, the suite also runs rewinds and
   * forks end to end on the storage under test, read back by a second agent.
   */
  agent?: ConformanceAgentFactory;
}

/** What `defineMemoryStorageConformance` takes. */
export interface MemoryStorageConformanceOptions {
  api: ConformanceTestApi;
  create: StorageFactory<MemoryStorage>;
}

/** Runs `body` against a fresh storage and always disposes of it. */
async function withStorage<S>(create: StorageFactory<S>, body: (storage: S) => Promise<void>): Promise<void> {
  const { storage, cleanup } = await create();
  try {
    await body(storage);
  } finally {
    await cleanup?.();
  }
}

/** A `test` that names the port in front of each case and gives each case its own storage. */
function portTest<S>(port: string, api: ConformanceTestApi, create: StorageFactory<S>): ConformanceTest<S> {
  return (name, body) => api.test(`${port}: ${name}`, () => withStorage(create, body));
}

/**
 * Registers the tests every SessionStorage must pass, one suite per method of the port (in
 * `conformance/session-storage/`), and what rewinds and forks need of it; each test gets a fresh storage from
 * `create`. With `agent`, rewinds and forks also run end to end through an Agent on the storage.
 */
export function defineSessionStorageConformance(options: SessionStorageConformanceOptions): void {
  const test = portTest('SessionStorage', options.api, options.create);
  saveEventTests(test);
  saveEventsTests(test);
  loadPayloadsTests(test);
  deleteSessionTests(test);
  listSessionsTests(test);
  findSessionTests(test);
  acquireSessionTests(test);
  turnHistoryTests(test);
  if (options.agent !== undefined) agentHistoryTests(test, options.agent);
}

/**
 * Registers the tests every MemoryStorage must pass, one suite per method of the port (in
 * `conformance/memory-storage/`); each test gets a fresh storage from `create`.
 */
export function defineMemoryStorageConformance(options: MemoryStorageConformanceOptions): void {
  const test = portTest('MemoryStorage', options.api, options.create);
  saveTests(test);
  deleteTests(test);
  searchTests(test);
}
