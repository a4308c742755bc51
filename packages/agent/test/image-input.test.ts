import { describe, expect, test } from 'vitest';
import {
  AgentBuilder,
  IMAGE_MAX_BYTES,
  IMAGE_MEDIA_TYPES,
  isAgentError,
  type UserInput,
} from '../src/index.js';
import { InMemorySessionStorage, ScriptedModelProvider } from '../src/testing/index.js';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const bytes = (...parts: (number[] | string)[]): Buffer =>
  Buffer.concat(
    parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part))),
  );
const base64 = (buffer: Buffer): string => buffer.toString('base64');

const PNG = base64(bytes(PNG_SIGNATURE, [0, 0, 0, 13], 'IHDR'));
const JPEG = base64(bytes([0xff, 0xd8, 0xff, 0xe0, 0, 16], 'JFIF'));
const GIF = base64(bytes('GIF89a', [1, 0, 1, 0]));
const WEBP = base64(bytes('RIFF', [36, 0, 0, 0], 'WEBPVP8 '));
const SVG_TEXT = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"></svg>';

async function harness() {
  const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'seen' }]] });
  const storage = new InMemorySessionStorage();
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model' })
    .registerModelProvider(provider)
    .registerSessionStorage(storage)
    .build();
  const session = await agent.newSession();
  return { agent, provider, storage, session };
}

function imageInput(data: unknown, mediaType: unknown): UserInput {
  return {
    content: [
      { type: 'text', text: 'what is this?' },
      { type: 'image', data, mediaType } as unknown as UserInput['content'][number],
    ],
  };
}

const badImages: [string, unknown, unknown][] = [
  ['text that is not base64', 'not base64 at all!!!', 'image/png'],
  ['SVG text as data', SVG_TEXT, 'image/png'],
  ['SVG bytes as base64, called a PNG', base64(Buffer.from(SVG_TEXT)), 'image/png'],
  ['SVG bytes with their own media type', base64(Buffer.from(SVG_TEXT)), 'image/svg+xml'],
  ['an XML-declared SVG as base64', base64(Buffer.from(`<?xml version="1.0"?>${SVG_TEXT}`)), 'image/png'],
  ['a BMP', base64(bytes('BM', [0, 0, 0, 0, 0, 0, 0, 0, 0, 0])), 'image/bmp'],
  ['the non-standard image/jpg', JPEG, 'image/jpg'],
  ['a PNG called a JPEG', PNG, 'image/jpeg'],
  ['a JPEG called a PNG', JPEG, 'image/png'],
  ['a GIF called a WebP', GIF, 'image/webp'],
  ['a WebP called a GIF', WEBP, 'image/gif'],
  ['bytes of no image format', base64(Buffer.from('hello, world, this is text')), 'image/png'],
  ['a data: URL', `data:image/png;base64,${PNG}`, 'image/png'],
  ['base64 without its padding', PNG.replace(/=+$/, '').slice(0, -1), 'image/png'],
  ['base64url characters', `${PNG.slice(0, -4)}-_-_`, 'image/png'],
  ['padding in the middle', `iVBO=w0KGgo=`, 'image/png'],
  [
    'a PNG one byte over the limit',
    base64(Buffer.concat([bytes(PNG_SIGNATURE), Buffer.alloc(IMAGE_MAX_BYTES - 7)])),
    'image/png',
  ],
  ['data far over the limit', 'A'.repeat(IMAGE_MAX_BYTES * 2), 'image/png'],
  ['a number as data', 42, 'image/png'],
  ['empty data', '', 'image/png'],
  ['no media type', PNG, undefined],
  ['a media type that is not text', PNG, 42],
  ['a media type that is not an image', PNG, 'text/plain'],
];

describe('a bad image is refused at sendMessage with INVALID_INPUT, and nothing of it is saved or sent', () => {
  test.each(badImages)('%s', async (_label, data, mediaType) => {
    const { agent, provider, storage, session } = await harness();
    const outcome = await session.sendMessage(imageInput(data, mediaType)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isAgentError(outcome)).toBe(true);
    expect(outcome).toMatchObject({ code: 'INVALID_INPUT' });

    // The storage holds the session's config and nothing else: no user message, no image.
    const saved = (await storage.loadSession(session.id)) ?? [];
    expect(saved.map((event) => event.payload.type)).toEqual(['metadata']);
    expect(session.messages()).toEqual([]);
    expect(provider.requests).toHaveLength(0);

    // The session goes on.
    expect((await (await session.sendMessage('still there?')).done).status).toBe('completed');
    await agent.shutdown();
  });
});

describe('a good image is accepted and kept as it was sent', () => {
  test.each([
    ['image/png', PNG],
    ['image/jpeg', JPEG],
    ['image/gif', GIF],
    ['image/webp', WEBP],
  ])('%s', async (mediaType, data) => {
    const { agent, provider, storage, session } = await harness();
    expect((await (await session.sendMessage(imageInput(data, mediaType))).done).status).toBe('completed');
    const image = { type: 'image', data, mediaType };
    expect(provider.requests[0]?.messages[0]).toMatchObject({ type: 'user', content: [{}, image] });
    const saved = (await storage.loadSession(session.id)) ?? [];
    expect(saved[1]?.payload).toMatchObject({ type: 'user_message', content: [{}, image] });
    await agent.shutdown();
  });

  test('line-wrapped base64 and an upper-case media type are kept in their plain form', async () => {
    const { agent, provider, session } = await harness();
    const wrapped = base64(Buffer.concat([bytes(PNG_SIGNATURE), Buffer.alloc(120, 7)])).replace(
      /.{76}/g,
      '$&\r\n',
    );
    expect((await (await session.sendMessage(imageInput(wrapped, 'IMAGE/PNG'))).done).status).toBe(
      'completed',
    );
    expect(provider.requests[0]?.messages[0]).toMatchObject({
      content: [{}, { type: 'image', data: wrapped.replace(/\s/g, ''), mediaType: 'image/png' }],
    });
    await agent.shutdown();
  });

  test('an image of exactly the documented limit is accepted', async () => {
    const { agent, session } = await harness();
    const data = base64(Buffer.concat([bytes(PNG_SIGNATURE), Buffer.alloc(IMAGE_MAX_BYTES - 8)]));
    expect((await (await session.sendMessage(imageInput(data, 'image/png'))).done).status).toBe('completed');
    await agent.shutdown();
  });

  test('the documented media types are the four sniffed ones', () => {
    expect([...IMAGE_MEDIA_TYPES].sort()).toEqual(['image/gif', 'image/jpeg', 'image/png', 'image/webp']);
    expect(IMAGE_MAX_BYTES).toBe(5 * 1024 * 1024);
  });
});
