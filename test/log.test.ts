/**
 * FENCEQ_LOG's levels: each writes its own lines and the more severe ones, case-insensitive,
 * default info; an unknown level is refused with a typed error naming FENCEQ_LOG and the value,
 * in the library (ValidationError) and in the Lambda functions (ConfigError).
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { fenceqLogger, handlerLogger } from '../src/aws/powertools-logger.js';
import { ConfigError } from '../src/aws/errors.js';
import { ValidationError } from '../src/errors.js';
import { defaultLogger, memoryLogger } from '../src/log.js';

/** The levels of the lines a logger built for `env` writes when it is sent one line of each level. */
function written(env: Record<string, string | undefined>): string[] {
  const lines: string[] = [];
  const logger = defaultLogger(env, (line) => lines.push(line));
  logger.debug?.('x.debug');
  logger.info('x.info');
  logger.warn('x.warn');
  logger.error('x.error');
  return lines.map((l) => (JSON.parse(l) as { level: string }).level);
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('FENCEQ_LOG', () => {
  test('each level writes its own lines and the more severe ones; silent writes none', () => {
    expect(written({ FENCEQ_LOG: 'silent' })).toEqual([]);
    expect(written({ FENCEQ_LOG: 'error' })).toEqual(['error']);
    expect(written({ FENCEQ_LOG: 'warn' })).toEqual(['warn', 'error']);
    expect(written({ FENCEQ_LOG: 'info' })).toEqual(['info', 'warn', 'error']);
    expect(written({ FENCEQ_LOG: 'debug' })).toEqual(['debug', 'info', 'warn', 'error']);
  });

  test('is case-insensitive; unset, empty and json (what fenceq start gives its workers) are info', () => {
    expect(written({ FENCEQ_LOG: 'DEBUG' })).toEqual(['debug', 'info', 'warn', 'error']);
    expect(written({ FENCEQ_LOG: ' Warn ' })).toEqual(['warn', 'error']);
    expect(written({})).toEqual(['info', 'warn', 'error']);
    expect(written({ FENCEQ_LOG: '' })).toEqual(['info', 'warn', 'error']);
    expect(written({ FENCEQ_LOG: 'json' })).toEqual(['info', 'warn', 'error']);
  });

  test('an unknown level is a ValidationError naming FENCEQ_LOG and the value', () => {
    for (const value of ['verbose', 'trace', '3']) {
      expect(() => defaultLogger({ FENCEQ_LOG: value })).toThrow(ValidationError);
      expect(() => defaultLogger({ FENCEQ_LOG: value })).toThrow(
        expect.objectContaining({ field: 'FENCEQ_LOG', value, message: expect.stringContaining('silent, error, warn, info, debug') }),
      );
    }
  });

  test('a memory logger keeps debug lines with their level', () => {
    const log = memoryLogger();
    log.debug?.('claim.lost', { id: 'a' });
    expect(log.records).toEqual([{ level: 'debug', event: 'claim.lost', fields: { id: 'a' } }]);
  });
});

describe('FENCEQ_LOG in the Lambda functions (Powertools)', () => {
  test("sets Powertools' level, passes debug lines through at debug only, and leaves Powertools' own setting when unset", () => {
    const levels = ['silent', 'error', 'warn', 'info', 'debug', 'Debug'].map((l) => handlerLogger({ FENCEQ_LOG: l }).getLevelName());
    expect(levels).toEqual(['SILENT', 'ERROR', 'WARN', 'INFO', 'DEBUG', 'DEBUG']);
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'WARN');
    expect(handlerLogger({}).getLevelName()).toBe('WARN');
    expect(handlerLogger({ FENCEQ_LOG: 'error' }).getLevelName()).toBe('ERROR');
    vi.unstubAllEnvs();

    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
    fenceqLogger(handlerLogger({ FENCEQ_LOG: 'info' })).debug?.('x.hidden');
    fenceqLogger(handlerLogger({ FENCEQ_LOG: 'debug' })).debug?.('x.shown', { id: 'a' });
    vi.restoreAllMocks();
    const lines = out
      .join('')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([expect.objectContaining({ level: 'DEBUG', message: 'x.shown', id: 'a' })]);
  });

  test('an unknown level is a ConfigError naming FENCEQ_LOG and the value, so the function does not start', () => {
    expect(() => handlerLogger({ FENCEQ_LOG: 'loud' })).toThrow(ConfigError);
    expect(() => handlerLogger({ FENCEQ_LOG: 'loud' })).toThrow(
      expect.objectContaining({
        setting: 'FENCEQ_LOG',
        message: 'environment variable FENCEQ_LOG must be one of silent, error, warn, info, debug; got "loud"',
      }),
    );
  });
});
