// The scripted agent behind the chat demos (web-chat/serve.mjs, react-chat/serve.mjs): no model server
// needed. The first message gets a reasoning line, a clock tool call and an answer; the second asks to write a
// note (a call that needs approval); every later one gets `laterAnswer`.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentBuilder, InMemorySessionStorage } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';

/** Builds the demo agent on an in-memory storage; answers `{ agent, sessions }`. */
export async function demoAgent({ laterAnswer }) {
  const notes = await mkdtemp(join(tmpdir(), 'youyou-demo-notes-'));
  const provider = new ScriptedModelProvider({
    responses: [
      [
        { type: 'reasoning', text: 'The user wants the time; the clock tool knows it.' },
        { type: 'tool_call', toolName: 'clock', arguments: {} },
      ],
      [
        { type: 'text', text: 'It is ' },
        { type: 'delay', ms: 400 },
        { type: 'text', text: 'noon.' },
      ],
      [{ type: 'tool_call', toolName: 'write_note', arguments: { text: 'Buy milk' } }],
      [{ type: 'text', text: 'Done: the note is written.' }],
      ...Array.from({ length: 50 }, () => laterAnswer),
    ],
  });
  const sessions = new InMemorySessionStorage();
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model', maxActiveSessions: 8 })
    .registerModelProvider(provider)
    .registerSessionStorage(sessions)
    .registerTool({
      name: 'clock',
      description: 'tells the time',
      parametersSchema: { type: 'object', properties: {} },
      isMutating: false,
      execute: async () => ({ content: '12:00', isError: false }),
    })
    .registerTool({
      name: 'write_note',
      description: 'writes a note file',
      parametersSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      isMutating: true,
      needsApproval: true,
      execute: async (input) => {
        await writeFile(join(notes, 'note.txt'), String(input.arguments.text));
        return { content: `written to ${join(notes, 'note.txt')}`, isError: false };
      },
    })
    .build();
  return { agent, sessions };
}
