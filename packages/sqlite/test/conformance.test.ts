import { AgentBuilder } from '@youyou/agent';
import {
  type ConformanceAgentFactory,
  defineMemoryStorageConformance,
  defineSessionStorageConformance,
} from '@youyou/agent/testing';
import { test } from 'vitest';
import { openSqliteStorage } from '../src/index.js';
import { makeTempFolder } from './support/temp-folder.js';

/** An Agent on the storage under test, for the suite's end-to-end rewind and fork cases. */
const agent: ConformanceAgentFactory = ({ storage, provider }) =>
  new AgentBuilder({ defaultModel: 'scripted-model' })
    .registerModelProvider(provider)
    .registerSessionStorage(storage)
    .build();

/** Each conformance test gets its own database file in its own temp folder, removed afterwards. */
async function freshStorage() {
  const folder = await makeTempFolder();
  const storage = await openSqliteStorage(folder.file('agent.db'));
  return {
    storage,
    cleanup: async () => {
      await storage.close();
      await folder.remove();
    },
  };
}

defineSessionStorageConformance({
  api: { test },
  create: async () => {
    const { storage, cleanup } = await freshStorage();
    return { storage: storage.sessions, cleanup };
  },
  agent,
});

defineMemoryStorageConformance({
  api: { test },
  create: async () => {
    const { storage, cleanup } = await freshStorage();
    return { storage: storage.memories, cleanup };
  },
});

// The same suites on an in-memory database, which has no WAL file.
defineSessionStorageConformance({
  api: { test: (name, fn) => test(`:memory: ${name}`, fn) },
  create: async () => {
    const storage = await openSqliteStorage(':memory:');
    return { storage: storage.sessions, cleanup: () => storage.close() };
  },
  agent,
});

defineMemoryStorageConformance({
  api: { test: (name, fn) => test(`:memory: ${name}`, fn) },
  create: async () => {
    const storage = await openSqliteStorage(':memory:');
    return { storage: storage.memories, cleanup: () => storage.close() };
  },
});
