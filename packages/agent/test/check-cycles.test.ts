import { appendFileSync, cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { repository, runScript, type ScriptRun, temporaryRepositories } from './support/script-runs.js';

/** Runs the cycle check on `root` in a child process. */
function checkCycles(root?: string): Promise<ScriptRun> {
  return runScript('check-cycles.mjs', root === undefined ? [] : [root]);
}

describe('scripts/check-cycles.mjs', () => {
  const repositories = temporaryRepositories('youyou-cycles-');
  /** A temporary repository whose packages hold these files (path → source). */
  const repositoryWith = repositories.create;

  afterEach(() => repositories.removeAll());

  it('finds a planted cycle, type imports and index files included, and exits 1', async () => {
    const root = repositoryWith({
      'packages/demo/src/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'packages/demo/src/b.ts':
        "import type { C } from './nested/index.js';\nexport const b = 1 as unknown as C;\n",
      'packages/demo/src/nested/index.ts': "export type { A as C } from '../c.js';\n",
      'packages/demo/src/c.ts': "import type { a } from './a.js';\nexport type A = typeof a;\n",
      'packages/demo/src/leaf.ts': "import { a } from './a.js';\nexport const leaf = a;\n",
      'packages/other/src/index.ts': "export * from './x.js';\n",
      'packages/other/src/x.ts': "import { y } from './y.js';\nexport const x = y;\n",
      'packages/other/src/y.ts': "import { x } from './x.js';\nexport const y = () => x;\n",
    });
    const { code, stderr } = await checkCycles(root);
    expect(code).toBe(1);
    const reported = stderr.split('\n').filter((line) => line.startsWith('import cycle:'));
    expect(reported.sort()).toEqual([
      'import cycle: packages/demo/src/a.ts -> packages/demo/src/b.ts -> packages/demo/src/nested/index.ts -> packages/demo/src/c.ts -> packages/demo/src/a.ts',
      'import cycle: packages/other/src/x.ts -> packages/other/src/y.ts -> packages/other/src/x.ts',
    ]);
  });

  it('exits 0 for imports without a cycle', async () => {
    const root = repositoryWith({
      'packages/demo/src/a.ts':
        "import { b } from './b.js';\nimport { c } from './c.js';\nexport const a = b + c;\n",
      'packages/demo/src/b.ts': "import { c } from './c.js';\nexport const b = c;\n",
      'packages/demo/src/c.ts':
        "import { readFileSync } from 'node:fs';\nexport const c = readFileSync.length;\n",
    });
    const { code, stdout } = await checkCycles(root);
    expect(code).toBe(0);
    expect(stdout).toContain('no import cycle among 3 source files');
  });

  it('finds no cycle in the packages of this repository', async () => {
    const { code, stderr } = await checkCycles();
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  describe("the core's folder table", () => {
    /** A temporary repository holding a copy of this repository's core (packages/agent/src). */
    function copyOfTheCore(): string {
      const root = repositoryWith({});
      cpSync(join(repository, 'packages', 'agent', 'src'), join(root, 'packages', 'agent', 'src'), {
        recursive: true,
      });
      return root;
    }

    it('passes on the core as it is', async () => {
      const { code, stdout, stderr } = await checkCycles(copyOfTheCore());
      expect(stderr).toBe('');
      expect(code).toBe(0);
      const floors = /the core's folders keep their table and stand on (\d+) floor\(s\)/.exec(stdout);
      expect(Number(floors?.[1])).toBeLessThanOrEqual(8);
    });

    it('fails on a feature that imports another feature, naming both files and the rule', async () => {
      const root = copyOfTheCore();
      appendFileSync(
        join(root, 'packages/agent/src/skills/skill.ts'),
        "\nexport type { MemoryManager as Planted } from '../memory/memory.js';\n",
      );
      const { code, stderr } = await checkCycles(root);
      expect(code).toBe(1);
      expect(stderr.split('\n')).toContain(
        'import breaks the folder table: packages/agent/src/skills/skill.ts -> packages/agent/src/memory/memory.ts (skills/ may import kernel/, ports/, model/, log/)',
      );
    });

    it('fails on an import of the turn from anywhere but session/, and of session/ from the turn', async () => {
      const root = copyOfTheCore();
      appendFileSync(
        join(root, 'packages/agent/src/kernel/types.ts'),
        "\nexport type { TurnOptions as Planted } from '../turn/turn-options.js';\n",
      );
      appendFileSync(
        join(root, 'packages/agent/src/turn/steering.ts'),
        "\nexport type { Session as Planted } from '../session/session.js';\n",
      );
      const { code, stderr } = await checkCycles(root);
      expect(code).toBe(1);
      const broken = stderr.split('\n').filter((line) => line.startsWith('import breaks the folder table:'));
      expect(broken).toEqual([
        'import breaks the folder table: packages/agent/src/kernel/types.ts -> packages/agent/src/turn/turn-options.ts (kernel/ may import nothing of the core)',
        expect.stringMatching(
          /^import breaks the folder table: packages\/agent\/src\/turn\/steering\.ts -> packages\/agent\/src\/session\/session\.ts \(turn\/ may import kernel\/, ports\/, model\/, log\/, context\/, /,
        ),
      ]);
    });

    it('fails on a folder the table does not know', async () => {
      const root = copyOfTheCore();
      mkdirSync(join(root, 'packages/agent/src/extras'));
      writeFileSync(
        join(root, 'packages/agent/src/extras/extra.ts'),
        "import type { Message } from '../kernel/types.js';\nexport type Extra = Message;\n",
      );
      const { code, stderr } = await checkCycles(root);
      expect(code).toBe(1);
      expect(stderr).toContain(
        'import breaks the folder table: packages/agent/src/extras/extra.ts -> packages/agent/src/kernel/types.ts (extras/ is not a folder of the table',
      );
    });
  });

  describe("the CLI's folder table", () => {
    /** A temporary repository holding a copy of this repository's CLI (packages/cli/src). */
    function copyOfTheCli(): string {
      const root = repositoryWith({});
      cpSync(join(repository, 'packages', 'cli', 'src'), join(root, 'packages', 'cli', 'src'), {
        recursive: true,
      });
      return root;
    }

    it('passes on the CLI as it is', async () => {
      const { code, stdout, stderr } = await checkCycles(copyOfTheCli());
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).toMatch(/the CLI's folders keep their table and stand on \d+ floor\(s\)/);
    });

    it('fails on a mode that imports another mode, naming both files and the rule', async () => {
      const root = copyOfTheCli();
      appendFileSync(
        join(root, 'packages/cli/src/modes/interactive/interactive.ts'),
        "\nexport { runPrintMode as Planted } from '../print.js';\n",
      );
      appendFileSync(
        join(root, 'packages/cli/src/modes/print.ts'),
        "\nexport { runServe as Planted } from './serve/serve.js';\n",
      );
      const { code, stderr } = await checkCycles(root);
      expect(code).toBe(1);
      const broken = stderr.split('\n').filter((line) => line.startsWith('import breaks the folder table:'));
      expect(broken).toEqual([
        'import breaks the folder table: packages/cli/src/modes/interactive/interactive.ts -> packages/cli/src/modes/print.ts (modes/interactive/ may import text/, approval/, sandbox/, config/, tools/, chat/, runtime/, sessions/)',
        'import breaks the folder table: packages/cli/src/modes/print.ts -> packages/cli/src/modes/serve/serve.ts (modes/print/ may import text/, approval/, sandbox/, config/, tools/, chat/, runtime/, sessions/)',
      ]);
    });

    it('fails on the chat importing the runtime, and on a folder the table does not know', async () => {
      const root = copyOfTheCli();
      appendFileSync(
        join(root, 'packages/cli/src/chat/render.ts'),
        "\nexport type { CliRuntime as Planted } from '../runtime/setup.js';\n",
      );
      mkdirSync(join(root, 'packages/cli/src/extras'));
      writeFileSync(
        join(root, 'packages/cli/src/extras/extra.ts'),
        "import { neutralize } from '../text/terminal-text.js';\nexport const extra = neutralize;\n",
      );
      const { code, stderr } = await checkCycles(root);
      expect(code).toBe(1);
      const broken = stderr.split('\n').filter((line) => line.startsWith('import breaks the folder table:'));
      expect(broken).toEqual([
        'import breaks the folder table: packages/cli/src/chat/render.ts -> packages/cli/src/runtime/setup.ts (chat/ may import text/, approval/, config/)',
        expect.stringMatching(
          /^import breaks the folder table: packages\/cli\/src\/extras\/extra\.ts -> packages\/cli\/src\/text\/terminal-text\.ts \(extras\/ is not a folder of the table/,
        ),
      ]);
    });
  });
});
