import { type ParseArgsConfig, parseArgs } from 'node:util';
import { closestName } from './closest-name.js';

/** A command-line flag as node:util parseArgs takes it, with its help text. */
export type FlagSpec = NonNullable<ParseArgsConfig['options']>[string] & { readonly help: string };

/**
 * Parses a command's flags strictly (no positionals). An unknown flag, or any other problem, becomes
 * `fail(message)`: the message names the flag, suggests the closest known one, and points to
 * `nereid <command> --help`.
 */
export function parseFlags(
  args: readonly string[],
  flags: Readonly<Record<string, FlagSpec>>,
  command: string,
  fail: (message: string) => Error,
): Record<string, string | string[] | boolean | undefined> {
  try {
    return parseArgs({
      args: [...args],
      options: Object.fromEntries(Object.entries(flags).map(([name, { help: _help, ...flag }]) => [name, flag])),
      strict: true,
      allowPositionals: false,
    }).values as Record<string, string | string[] | boolean | undefined>;
  } catch (error) {
    const message = (error as Error).message;
    const unknown = /Unknown option '(-{1,2}[^']+)'/.exec(message)?.[1];
    if (unknown === undefined) throw fail(message.replace(/\. To specify.*$/s, ''));
    const closest = closestName(unknown.replace(/^-+/, ''), Object.keys(flags));
    throw fail(`unknown flag '${unknown}'.${closest !== undefined ? ` Did you mean '--${closest}'?` : ''} Run 'nereid ${command} --help' for the flags.`);
  }
}
