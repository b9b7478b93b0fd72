#!/usr/bin/env node
import { NereidError } from '../kernel/errors.js';
import { analyze } from './analyze.js';
import { perf } from './perf.js';
import { serve } from './serve.js';

const USAGE = `Usage: nereid <command> [flags]

Commands:
  serve    start the inference server (nereid serve --help for its flags)
  perf     measure a model's throughput and latency on a running server (nereid perf --help)
  analyze  find a model's best configuration for a latency budget (nereid analyze --help)
`;

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'perf':
      return perf(rest);
    case 'analyze':
      return analyze(rest);
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(USAGE);
      return command === undefined ? 1 : 0;
    default:
      process.stderr.write(`nereid: unknown command '${command}'.\n\n${USAGE}`);
      return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(error instanceof NereidError ? `${error.message}\n` : `nereid: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
