import { describe, expect, it } from 'vitest';
import { ENV, readConfig } from '../../src/aws/config.js';
import { ConfigError } from '../../src/aws/errors.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { startTestQueue } from '../../src/testing/index.js';
import { endpoint, freshTable } from '../support/harness.js';
import { cli } from './support.js';

// One set of environment names everywhere: FENCEQ_TABLE_NAME and FENCEQ_DYNAMODB_ENDPOINT, read
// by the functions (readConfig), the CLI, and printed by `fenceq start` and fenceq/testing. The
// old names are refused where they would be read, so a local endpoint is never silently dropped
// (which sent a worker meant for the emulator to real AWS).
describe('environment names', () => {
  it('the CLI reads FENCEQ_TABLE_NAME and FENCEQ_DYNAMODB_ENDPOINT, the names the functions read', async () => {
    const t = await freshTable('fenceq-env');
    const env = { [ENV.tableName]: t.tableName, [ENV.dynamodbEndpoint]: endpoint() };
    expect(ENV).toMatchObject({ tableName: 'FENCEQ_TABLE_NAME', dynamodbEndpoint: 'FENCEQ_DYNAMODB_ENDPOINT' });
    const run = await cli(['--json', 'stats'], { env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(EXIT.ok);
    expect(readConfig(env)).toMatchObject({ tableName: t.tableName, dynamodbEndpoint: endpoint() });
  });

  it('the CLI refuses the old DYNAMODB_ENDPOINT (exit 2, one line, nothing sent) instead of going to AWS without it', async () => {
    const run = await cli(['get', 'job-1'], { env: { FENCEQ_TABLE_NAME: 'fenceq-anything', DYNAMODB_ENDPOINT: 'http://127.0.0.1:1' } });
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toBe(
      'fenceq: environment variable DYNAMODB_ENDPOINT is set but fenceq reads FENCEQ_DYNAMODB_ENDPOINT: rename it (or unset DYNAMODB_ENDPOINT)\n',
    );
  });

  it('the CLI refuses the old FENCEQ_TABLE, one line naming the new name', async () => {
    const run = await cli(['get', 'job-1'], { env: { FENCEQ_TABLE: 'fenceq-anything', FENCEQ_DYNAMODB_ENDPOINT: endpoint() } });
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toBe('fenceq: environment variable FENCEQ_TABLE is set but fenceq reads FENCEQ_TABLE_NAME: rename it (or unset FENCEQ_TABLE)\n');
  });

  it('an old name is not refused when a flag or the new name says where to go', async () => {
    const t = await freshTable('fenceq-env');
    const byFlag = await cli(['--json', '--endpoint', endpoint(), '--table', t.tableName, 'stats'], {
      env: { DYNAMODB_ENDPOINT: 'http://127.0.0.1:1', FENCEQ_TABLE: 'x' },
    });
    expect(byFlag.code).toBe(EXIT.ok);
    const byNewName = await cli(['--json', 'stats'], {
      env: { [ENV.tableName]: t.tableName, [ENV.dynamodbEndpoint]: endpoint(), DYNAMODB_ENDPOINT: 'http://127.0.0.1:1' },
    });
    expect(byNewName.code).toBe(EXIT.ok);
  });

  it('the functions refuse an old name with a ConfigError naming it, rather than use AWS', () => {
    const refused = (env: Record<string, string>) => {
      try {
        readConfig(env);
      } catch (err) {
        return err;
      }
      return undefined;
    };
    const noEndpoint = refused({ FENCEQ_TABLE_NAME: 't-1', DYNAMODB_ENDPOINT: 'http://127.0.0.1:1' });
    expect(noEndpoint).toBeInstanceOf(ConfigError);
    expect(noEndpoint).toMatchObject({ setting: 'DYNAMODB_ENDPOINT' });
    expect(refused({ FENCEQ_TABLE: 't-1' })).toMatchObject({ setting: 'FENCEQ_TABLE' });
    expect(refused({ FENCEQ_TABLE_NAME: 't-1', FENCEQ_DYNAMODB_ENDPOINT: 'http://127.0.0.1:2', DYNAMODB_ENDPOINT: 'http://127.0.0.1:1' })).toBeUndefined();
  });

  it('fenceq/testing hands out the same names, and both readers find its endpoint in them', async () => {
    const local = await startTestQueue({ endpoint: endpoint() });
    try {
      expect(readConfig(local.env)).toMatchObject({ tableName: local.tableName, dynamodbEndpoint: local.endpoint });
      const run = await cli(['--json', 'stats'], { env: local.env });
      expect(run.code).toBe(EXIT.ok);
    } finally {
      await local.stop();
    }
  });
});
