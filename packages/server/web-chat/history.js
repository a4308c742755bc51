// The stored history of a session as the page's transcript items: questions, answers and tool calls.

const blocksText = (content) =>
  (Array.isArray(content) ? content : [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('');

/** A session's committed history (`GET /sessions/:id/messages`) as transcript items. */
export function historyToItems(messages) {
  const items = [];
  for (const message of messages) {
    if (message.type === 'user') items.push({ kind: 'user', text: blocksText(message.content) });
    else if (message.type === 'assistant') {
      const text = blocksText(message.content);
      if (text !== '') items.push({ kind: 'assistant', turnId: '', text });
    } else if (message.type === 'tool_call') {
      items.push({
        kind: 'tool',
        callId: message.callId,
        toolName: message.toolName,
        args: message.arguments ?? {},
        state: 'running',
      });
    } else if (message.type === 'tool_result') {
      const tool = items.find((item) => item.kind === 'tool' && item.callId === message.callId);
      if (tool) {
        tool.state = message.isError ? 'failed' : 'done';
        tool.output = typeof message.content === 'string' ? message.content : blocksText(message.content);
      }
    }
  }
  return items;
}
