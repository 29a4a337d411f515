/** The CLI's streams and environment, injected so commands run in-process in tests. */
import { readFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import type { Json } from '../job.js';
import { errorCode } from '../type-guards.js';
import { parseJson } from '../validate.js';
import { CliError, EXIT } from './exit-codes.js';

/** What a command may touch of the outside world. */
export interface CliIo {
  /** Writes to standard output (text as given, no newline added). */
  readonly stdout: (text: string) => void;
  /** Writes to standard error. */
  readonly stderr: (text: string) => void;
  /** Reads all of standard input; undefined when stdin is a terminal (nothing piped). */
  readonly readStdin: () => Promise<string | undefined>;
  /** Whether stdout is a terminal (the live view redraws in place only then). */
  readonly stdoutIsTTY: boolean;
  /** Whether stdin is a terminal, so a destructive command may ask for confirmation. Absent: no. */
  readonly stdinIsTTY?: boolean;
  /** Asks a question on the terminal and resolves to the line typed (only called when `stdinIsTTY`). */
  readonly ask?: (question: string) => Promise<string>;
  /** Environment variables. */
  readonly env: NodeJS.ProcessEnv;
  /** Epoch ms. */
  readonly clock: () => number;
}

/** The real process's streams. */
export function processIo(): CliIo {
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    readStdin: async () => {
      if (process.stdin.isTTY) return undefined;
      return (await buffer(process.stdin)).toString('utf8');
    },
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    stdinIsTTY: Boolean(process.stdin.isTTY),
    ask: async (question) => {
      const { createInterface } = await import('node:readline/promises');
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        return await rl.question(question);
      } finally {
        rl.close();
      }
    },
    env: process.env,
    clock: Date.now,
  };
}

/** Where a payload comes from: an argument, `--file PATH`, or stdin (`-` or nothing given with stdin piped). */
export async function readPayload(io: CliIo, arg: string | undefined, file: string | undefined): Promise<Json> {
  return readJsonInput(io, arg, file, 'payload', ` (a string payload needs quotes, e.g. '"hello"')`);
}

/**
 * Where a JSON document (`what`: `payload`, `flow`) comes from: an argument, `--file PATH`, or
 * stdin (`-` or nothing given with stdin piped). Any problem is a usage error naming its source;
 * `hint` follows the message of text that is not JSON.
 */
export async function readJsonInput(io: CliIo, arg: string | undefined, file: string | undefined, what: string, hint = ''): Promise<Json> {
  if (arg !== undefined && file !== undefined) throw new CliError(EXIT.usage, `give the ${what} either as an argument or with --file, not both`);
  let text: string | undefined;
  let from: string;
  if (file !== undefined) {
    from = `--file ${file}`;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      const code = errorCode(err);
      throw new CliError(EXIT.usage, `cannot read --file ${file}: ${code === 'ENOENT' ? 'no such file' : (code ?? 'unreadable')}`, {
        field: '--file',
        value: file,
      });
    }
  } else if (arg !== undefined && arg !== '-') {
    from = `the ${what} argument`;
    text = arg;
  } else {
    from = 'stdin';
    text = await io.readStdin();
    if (text === undefined || text.trim() === '') {
      throw new CliError(EXIT.usage, `no ${what}: give it as an argument (JSON), with --file PATH, or on stdin`);
    }
  }
  try {
    return parseJson(text)!;
  } catch {
    throw new CliError(EXIT.usage, `${from} is not JSON${hint}`, {
      ...(file === undefined ? {} : { field: '--file', value: file }),
    });
  }
}
