import { AgentBuilder } from '@youyou/agent';
import {
  type ConformanceAgentFactory,
  defineMemoryStorageConformance,
  defineSessionStorageConformance,
} from '@youyou/agent/testing';
import type { Pool } from 'pg';
import { afterAll, beforeAll, test } from 'vitest';
import { openPostgresStorage } from '../src/index.js';
import { dropSchema, randomSchema, testPool } from './support/database.js';

/** An Agent on the storage under test, for the suite's end-to-end rewind and fork cases. */
const agent: ConformanceAgentFactory = ({ storage, provider }) =>
  new AgentBuilder({ defaultModel: 'scripted-model' })
    .registerModelProvider(provider)
    .registerSessionStorage(storage)
    .build();

let pool: Pool;
const schemas: string[] = [];

beforeAll(() => {
  pool = testPool();
});

afterAll(async () => {
  for (const schema of schemas) await dropSchema(pool, schema);
  await pool.end();
});

/** Every conformance test gets its own schema, migrated from scratch. */
async function freshStorage() {
  const schema = randomSchema();
  schemas.push(schema);
  const storage = await openPostgresStorage({ pool, schema });
  return {
    storage,
    cleanup: async () => {
      await storage.close();
      await dropSchema(pool, schema);
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
