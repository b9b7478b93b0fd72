import { accessSync, constants } from 'node:fs';

/** Debian's Chromium, driven by playwright-core (which downloads no browser of its own). */
export const CHROMIUM = '/usr/bin/chromium';

const hasChromium = ((): boolean => {
  try {
    accessSync(CHROMIUM, constants.X_OK);
    return true;
  } catch {
    return false;
  }
})();

/** The reason to skip a browser test, or false. CI installs Chromium (.ci/run), so there a missing browser is a failure, not a skip. */
export const skipBrowser: string | false = !hasChromium && !process.env['CI'] ? `${CHROMIUM} is missing (apt-get install chromium); see .ci/run` : false;
