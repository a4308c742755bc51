import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One problem axe-core found: its rule and the elements it found it on. */
export interface Violation {
  id: string;
  targets: string[];
}

/** axe-core's WCAG 2 A/AA and best-practice checks on the page as it is; the problems it finds. */
export async function accessibilityProblems(page: Page): Promise<Violation[]> {
  await page.evaluate(await AXE_SOURCE);
  return page.evaluate(`axe
    .run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21aa', 'best-practice'] })
    .then((result) => result.violations.map((violation) => ({
      id: violation.id,
      targets: violation.nodes.map((node) => String(node.target)),
    })))`) as Promise<Violation[]>;
}
