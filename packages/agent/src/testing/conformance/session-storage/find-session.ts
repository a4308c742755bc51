import assert from 'node:assert/strict';
import type { SessionStorage } from '../../../ports/storage.js';
import { assistantEvent, at, type ConformanceTest, findIds, userEvent } from '../support.js';

/** findSession: what a query matches, in which order, and that hostile text is taken literally. */
export function findSessionTests(test: ConformanceTest<SessionStorage>): void {
  test('findSession matches an id prefix, title text or message text, newest first', async (storage) => {
    await storage.saveEvent('alpha-1', userEvent(0, 'Plan the Garden party'));
    await storage.saveEvent('alpha-1', assistantEvent(1, 'Sure, let us talk about TULIPS'));
    await storage.saveEvent('beta-1', userEvent(2, 'garden hose'));
    await storage.saveEvent('alpha-2', userEvent(3, 'Fix the bug'));
    assert.deepStrictEqual(await findIds(storage, 'alpha'), ['alpha-2', 'alpha-1']);
    assert.deepStrictEqual(await findIds(storage, 'alpha-1'), ['alpha-1']);
    assert.deepStrictEqual(await findIds(storage, 'lpha'), [], 'an id matches by prefix only');
    assert.deepStrictEqual(await findIds(storage, 'garden'), ['beta-1', 'alpha-1']);
    assert.deepStrictEqual(await findIds(storage, 'GARDEN PARTY'), ['alpha-1']);
    assert.deepStrictEqual(await findIds(storage, 'tulips'), ['alpha-1'], 'assistant text is searched');
    assert.deepStrictEqual(await findIds(storage, 'nothing like this'), []);
    assert.deepStrictEqual(await findIds(storage, ''), []);
    assert.deepStrictEqual(await findIds(storage, '   '), []);
    const [summary] = await storage.findSession('beta');
    assert.deepStrictEqual(summary, {
      sessionId: 'beta-1',
      title: 'garden hose',
      createdAt: at(2),
      updatedAt: at(2),
      messageCount: 1,
    });
  });

  test('hostile text is stored and searched literally', async (storage) => {
    const texts = [
      '50% off',
      'snake_case name',
      'back\\slash C:\\temp',
      `it's "quoted"`,
      '"a" OR b*',
      'plain words here',
      "'; DROP TABLE sessions; --",
    ];
    for (const [index, text] of texts.entries()) await storage.saveEvent(`h${index}`, userEvent(index, text));
    for (const [index, text] of texts.entries()) {
      assert.deepStrictEqual(await storage.loadSession(`h${index}`), [userEvent(index, text)]);
    }
    const cases: [string, string[]][] = [
      ['%', ['h0']],
      ['_', ['h1']],
      ['\\', ['h2']],
      ['"quoted"', ['h3']],
      ['"a" OR b*', ['h4']],
      ['*', ['h4']],
      ["'", ['h6', 'h3']],
      ['DROP TABLE', ['h6']],
      ['a%b', []],
      ['sn_ke', []],
    ];
    for (const [query, expected] of cases) {
      assert.deepStrictEqual(
        await findIds(storage, query),
        expected,
        `findSession(${JSON.stringify(query)})`,
      );
    }
  });
}
