/** Test doubles for agents built on @youyou/agent: a scripted model, in-memory storages and storage conformance suites. */
export { InMemoryMemoryStorage, InMemorySessionStorage } from '../storage/in-memory.js';
export * from './scripted-provider.js';
export * from './storage-conformance.js';
