import { type Browser, chromium } from 'playwright-core';

/** Where Debian's `chromium` package puts the browser; `scripts/test.sh` installs it when missing. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Headless Chromium driven by playwright-core: the system's browser (none can be downloaded here), with
 * its background traffic turned off so that a test only sees the page's own requests.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
