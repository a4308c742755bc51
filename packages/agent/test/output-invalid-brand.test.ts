import { expect, test } from 'vitest';
import { AgentError, isAgentError } from '../src/kernel/error.js';
import { isOutputInvalidError, OutputInvalidError } from '../src/output/structured-output.js';

type StructuredOutputModule = typeof import('../src/output/structured-output.js');

/** The same module loaded a second time (as a second installed copy of the package would be). */
async function secondCopy(): Promise<StructuredOutputModule> {
  const specifier = '../src/output/structured-output.js?second-copy';
  return (await import(/* @vite-ignore */ specifier)) as StructuredOutputModule;
}

test('an OutputInvalidError of another copy of the package is recognised by its brand', async () => {
  const copy = await secondCopy();
  expect(copy.OutputInvalidError, 'the copy is a distinct class').not.toBe(OutputInvalidError);
  const foreign = new copy.OutputInvalidError({
    errors: ['/answer: must be number'],
    text: '{"answer":"x"}',
  });
  expect(foreign instanceof OutputInvalidError, 'instanceof cannot see it').toBe(false);
  expect(isOutputInvalidError(foreign)).toBe(true);
  expect(isAgentError(foreign)).toBe(true);
  expect(copy.isOutputInvalidError(new OutputInvalidError({ errors: ['e'], text: 't' }))).toBe(true);
});

test('an AgentError with the OUTPUT_INVALID code but no brand, or a look-alike object, is not one', () => {
  expect(isOutputInvalidError(new AgentError({ code: 'OUTPUT_INVALID', message: 'made by hand' }))).toBe(
    false,
  );
  const lookAlike = { code: 'OUTPUT_INVALID', validationErrors: [], rawText: '' };
  expect(isOutputInvalidError(lookAlike)).toBe(false);
  expect(isOutputInvalidError(null)).toBe(false);
  expect(isOutputInvalidError('OUTPUT_INVALID')).toBe(false);
});
