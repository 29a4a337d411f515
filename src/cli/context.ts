/** What every command gets: the streams, the global options, and a lazily opened queue. */
import type { JobQueue } from '../job-queue.js';
import { silentLogger } from '../log.js';
import { openQueue, resolveConnection, type Connection, type GlobalOptions } from './config.js';
import type { CliIo } from './io.js';

/** The context a command runs in. */
export interface CommandContext {
  readonly io: CliIo;
  readonly options: GlobalOptions;
  /** The resolved connection (throws a usage error when no table is configured). */
  connection(): Connection;
  /** The queue, opened on first use. */
  queue(): JobQueue;
  /** Prints `json` as one JSON document with --json, else the human text. */
  print(human: () => string, json: unknown): void;
}

/** Builds the context of one CLI run; `closers` collects clients to destroy at the end. */
export function commandContext(io: CliIo, options: GlobalOptions, closers: (() => void)[]): CommandContext {
  let conn: Connection | undefined;
  let queue: JobQueue | undefined;
  const connection = () => (conn ??= resolveConnection(options, io.env));
  return {
    io,
    options,
    connection,
    queue() {
      if (!queue) {
        queue = openQueue(connection(), silentLogger);
        const client = queue.client;
        closers.push(() => client.destroy());
      }
      return queue;
    },
    print(human, json) {
      io.stdout(options.json ? `${JSON.stringify(json, null, 2)}\n` : `${human()}\n`);
    },
  };
}
