import { invalidInput } from '../kernel/error.js';
import type { ContentBlock, UserInput } from '../kernel/types.js';
import type { ModelInfo } from '../ports/model.js';
import { checkImage } from './image-input.js';

/**
 * Checks a user input against SPEC §5.1 (and each image against image-input.ts) and returns a private copy of its blocks, so the caller
 * changing its objects later changes nothing in the session. Throws INVALID_INPUT.
 */
export function normaliseUserInput(input: UserInput | string, model: ModelInfo): ContentBlock[] {
  if (typeof input === 'string') {
    if (input.trim() === '') throw invalidInput('the message is empty: send some text or an image');
    return [{ type: 'text', text: input }];
  }
  if (typeof input !== 'object' || input === null || !Array.isArray(input.content)) {
    throw invalidInput('sendMessage takes a string or { content: ContentBlock[] }');
  }
  if (input.content.length === 0) throw invalidInput('the message has no content blocks');
  const blocks: ContentBlock[] = [];
  let hasSubstance = false;
  input.content.forEach((block: unknown, index) => {
    const where = `content[${index}]`;
    if (typeof block !== 'object' || block === null) throw invalidInput(`${where} is not a content block`);
    const record = block as Record<string, unknown>;
    switch (record.type) {
      case 'text': {
        if (typeof record.text !== 'string') throw invalidInput(`${where}.text must be a string`);
        if (record.text.trim() !== '') hasSubstance = true;
        blocks.push({ type: 'text', text: record.text });
        break;
      }
      case 'image': {
        const image = checkImage({ data: record.data, mediaType: record.mediaType, where });
        if (!model.capabilities.vision) {
          throw invalidInput(
            `model '${model.id}' does not accept images; send text only or choose a model with vision`,
          );
        }
        hasSubstance = true;
        blocks.push({ type: 'image', data: image.data, mediaType: image.mediaType });
        break;
      }
      case 'reasoning':
        throw invalidInput(`${where} is a reasoning block; only assistant messages hold reasoning`);
      default:
        throw invalidInput(
          `${where} has the unknown type ${JSON.stringify(record.type)}; use 'text' or 'image'`,
        );
    }
  });
  if (!hasSubstance) throw invalidInput('the message holds only white space: send some text or an image');
  return blocks;
}
