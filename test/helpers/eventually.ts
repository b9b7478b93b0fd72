import assert from 'node:assert/strict';

/** Polls `check` every 100 ms until it holds; fails, naming `what`, after `timeoutS` seconds. */
export async function eventually(what: string, check: () => Promise<boolean>, timeoutS = 15): Promise<void> {
  for (let attempt = 0; attempt < timeoutS * 10; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`still not true after ${timeoutS} s: ${what}`);
}
