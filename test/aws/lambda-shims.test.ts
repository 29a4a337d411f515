import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { Metrics as PowertoolsMetrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeContext } from './support.js';

// The stand-ins scripts/bundle-functions.mjs puts in fenceq's Lambda bundles in place of
// Powertools' Logger and Metrics must write what Powertools writes for the calls fenceq makes.

const SHIMS = join(import.meta.dirname, '..', '..', 'scripts', 'lambda-shims');
type LoggerLike = { info(m: string, f?: object): void; warn(m: string, f?: object): void; error(m: string, f?: object): void; addContext(c: object): void };
type MetricsLike = { addDimension(n: string, v: string): void; addMetric(n: string, u: string, v: number): void; publishStoredMetrics(): void };
const shim = async <T>(file: string): Promise<T> => (await import(/* @vite-ignore */ pathToFileURL(join(SHIMS, file)).href)) as T;

/** Every line written to stdout and stderr while `run` runs, each tagged with its stream; times replaced by a fixed value. */
function capture(run: () => void): string[] {
  const lines: string[] = [];
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((l) => (lines.push(`out ${String(l)}`), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((l) => (lines.push(`err ${String(l)}`), true));
  try {
    run();
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return lines.map((l) => l.replace(/"timestamp":"[^"]+"/g, '"timestamp":"T"').replace(/"Timestamp":\d+/g, '"Timestamp":0'));
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("the Lambda bundles' Powertools Logger stand-in", () => {
  // The same values (errors with their stacks, one context) go to both loggers.
  const context = fakeContext(1_000, 'fenceq-api');
  const stale = new TypeError('bad', { cause: new Error('root') });
  const failed = Object.assign(new Error('with fields'), { code: 'E42' });
  const calls = (make: () => LoggerLike) => () => {
    const logger = make();
    logger.info('job.leased', { id: 'a', n: 1, big: 10n, nested: { deep: [1, null, 'x'] }, empty: '', none: null, gone: undefined });
    logger.addContext(context);
    logger.warn('lease.stale', { id: 'b', error: stale });
    logger.error('invoke.failed', { error: failed });
  };

  it.each([
    ['defaults', {}, {}],
    ['a constructor level', { logLevel: 'WARN' }, {}],
    ['POWERTOOLS_LOG_LEVEL', {}, { POWERTOOLS_LOG_LEVEL: 'ERROR' }],
    ["Lambda's log level over the constructor's", { logLevel: 'INFO' }, { AWS_LAMBDA_LOG_LEVEL: 'WARN' }],
    ['an X-Ray trace id', {}, { _X_AMZN_TRACE_ID: 'Root=1-abc-def;Parent=123;Sampled=1' }],
    ['SILENT', { logLevel: 'SILENT' }, {}],
  ])('writes what Powertools writes: %s', async (_what, options, env) => {
    for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
    const { Logger } = await shim<{ Logger: new (o: object) => LoggerLike }>('powertools-logger.mjs');
    const ours = capture(calls(() => new Logger({ serviceName: 'fenceq', ...options })));
    const theirs = capture(
      calls(() => new PowertoolsLogger({ serviceName: 'fenceq', ...options } as ConstructorParameters<typeof PowertoolsLogger>[0]) as unknown as LoggerLike),
    );
    expect(ours).toEqual(theirs);
  });
});

describe("the Lambda bundles' Powertools Metrics stand-in", () => {
  const calls = (make: () => MetricsLike) => () => {
    const m = make();
    m.addDimension('queue', 'q1');
    m.addMetric('Pending', MetricUnit.Count, 3);
    m.addMetric('OldestDueAge', MetricUnit.Seconds, 5);
    m.addMetric('Pending', MetricUnit.Count, 4);
    m.publishStoredMetrics();
    m.addMetric('Dead', MetricUnit.Count, 0);
    m.publishStoredMetrics();
    m.publishStoredMetrics();
  };

  it('writes the EMF records Powertools writes (an empty publish: nothing, where Powertools warns)', async () => {
    const { Metrics } = await shim<{ Metrics: new (o: object) => MetricsLike }>('powertools-metrics.mjs');
    const ours = capture(calls(() => new Metrics({ namespace: 'fenceq', serviceName: 'fenceq' })));
    const theirs = capture(calls(() => new PowertoolsMetrics({ namespace: 'fenceq', serviceName: 'fenceq' })));
    expect(theirs.filter((l) => l.includes('No application metrics'))).toHaveLength(1);
    expect(ours).toEqual(theirs.filter((l) => !l.includes('No application metrics')));
    expect(ours.filter((l) => l.includes('"_aws"'))).toHaveLength(2);
  });

  it('stamps the next record with setTimestamp, and the one after it with the time of its publish, as Powertools does', async () => {
    type Stamped = MetricsLike & { setTimestamp(t: number): void };
    const { Metrics } = await shim<{ Metrics: new (o: object) => Stamped }>('powertools-metrics.mjs');
    const minute = Math.floor(Date.now() / 60_000) * 60_000 - 120_000;
    const stamps = (m: Stamped) => {
      const lines: string[] = [];
      const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
      m.setTimestamp(minute);
      m.addMetric('JobsDone', MetricUnit.Count, 2);
      m.publishStoredMetrics();
      m.addMetric('JobsDone', MetricUnit.Count, 1);
      m.publishStoredMetrics();
      spy.mockRestore();
      return lines.map((l) => (JSON.parse(l) as { _aws: { Timestamp: number } })._aws.Timestamp);
    };
    for (const m of [new Metrics({ namespace: 'fenceq' }), new PowertoolsMetrics({ namespace: 'fenceq' }) as unknown as Stamped]) {
      const [first, second] = stamps(m);
      expect(first).toBe(minute);
      expect(second).toBeGreaterThan(minute + 60_000);
    }
  });
});

describe("the Lambda bundles' endpoint-discovery stand-in", () => {
  type Resolve = (input: Record<string, unknown>, o: { endpointDiscoveryCommandCtor: unknown }) => Record<string, unknown>;
  const provider = async (): Promise<boolean | undefined> => undefined;
  class DescribeEndpoints {}

  it.each([
    ['discovery left to the environment', { endpointDiscoveryEnabledProvider: provider }],
    ['discovery set in the client config', { endpointDiscoveryEnabled: true, endpointDiscoveryEnabledProvider: provider }],
  ])('gives the DynamoDB client the settings the real module gives it, less the cache: %s', async (_what, input) => {
    const real = (await import('@aws-sdk/middleware-endpoint-discovery')) as unknown as { resolveEndpointDiscoveryConfig: Resolve };
    const ours = await shim<{ resolveEndpointDiscoveryConfig: Resolve }>('no-endpoint-discovery.mjs');
    const { endpointCache, ...theirs } = real.resolveEndpointDiscoveryConfig({ ...input }, { endpointDiscoveryCommandCtor: DescribeEndpoints });
    const mine = ours.resolveEndpointDiscoveryConfig({ ...input }, { endpointDiscoveryCommandCtor: DescribeEndpoints });
    expect(endpointCache).toBeDefined();
    expect(Object.keys(mine).sort()).toEqual(Object.keys(theirs).sort());
    expect(mine.endpointDiscoveryCommandCtor).toBe(DescribeEndpoints);
    expect(mine.isClientEndpointDiscoveryEnabled).toBe(theirs.isClientEndpointDiscoveryEnabled);
    expect(await (mine.endpointDiscoveryEnabled as () => Promise<unknown>)()).toBe(await (theirs.endpointDiscoveryEnabled as () => Promise<unknown>)());
  });

  it('stands in only while no DynamoDB command of this SDK runs the discovery middleware', () => {
    const commands = join(dirname(createRequire(import.meta.url).resolve('@aws-sdk/client-dynamodb')), '..', 'dist-es', 'commands');
    const files = readdirSync(commands).filter((f) => f.endsWith('Command.js'));
    expect(files.length).toBeGreaterThan(50);
    expect(files.filter((f) => readFileSync(join(commands, f), 'utf8').includes('endpoint-discovery'))).toEqual([]);
  });

  it("the date parsers read what @smithy/core's read, for the formats AWS sends, and refuse what is no date", async () => {
    type Parse = (v: unknown) => Date | undefined;
    const stand = await shim<
      Record<'parseRfc3339DateTime' | 'parseRfc3339DateTimeWithOffset' | 'parseRfc7231DateTime' | 'parseEpochTimestamp', Parse> & {
        dateToUtcString(d: Date): string;
      }
    >('date-utils.mjs');
    // Expected: what @smithy/core/serde's own parsers returned for each (2026-12-04, SDK 3.1169).
    const cases: [keyof typeof stand, unknown, number][] = [
      ['parseRfc3339DateTime', '2026-12-04T21:30:05Z', 1_796_419_805_000],
      ['parseRfc3339DateTime', '2026-12-04T21:30:05.123Z', 1_796_419_805_123],
      ['parseRfc3339DateTimeWithOffset', '2026-12-04T21:30:05+02:00', 1_796_412_605_000],
      ['parseRfc7231DateTime', 'Fri, 04 Dec 2026 21:30:05 GMT', 1_796_419_805_000],
      ['parseEpochTimestamp', 1_796_419_805, 1_796_419_805_000],
      ['parseEpochTimestamp', 1_796_419_805.25, 1_796_419_805_250],
      ['parseEpochTimestamp', '1796419805', 1_796_419_805_000],
    ];
    for (const [fn, value, ms] of cases) if (fn !== 'dateToUtcString') expect(stand[fn](value)?.getTime(), `${fn}(${String(value)})`).toBe(ms);
    expect(stand.parseRfc7231DateTime(undefined)).toBeUndefined();
    expect(() => stand.parseRfc7231DateTime('soon')).toThrow(TypeError);
    expect(() => stand.parseEpochTimestamp('soon')).toThrow(TypeError);
    expect(stand.dateToUtcString(new Date(Date.UTC(2026, 11, 4, 21, 30, 5)))).toBe('Fri, 04 Dec 2026 21:30:05 GMT');
  });
});

describe("the Lambda bundles' retry stand-ins", () => {
  const SMITHY_RETRY = join(dirname(createRequire(import.meta.url).resolve('@smithy/core/package.json')), 'dist-es', 'submodules', 'retry');
  type Parse = (response: unknown) => Date | undefined;

  it('parseRetryAfterHeader: the hint the SDK reads from each form an AWS service sends, and none from a bad one', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-12-04T12:00:00Z'), toFake: ['Date'] });
    try {
      const { parseRetryAfterHeader: ours } = await shim<{ parseRetryAfterHeader: Parse }>('retry-after.mjs');
      const { parseRetryAfterHeader: theirs } = (await import(
        /* @vite-ignore */ pathToFileURL(join(SMITHY_RETRY, 'middleware-retry', 'parseRetryAfterHeader.js')).href
      )) as {
        parseRetryAfterHeader: Parse;
      };
      const { HttpResponse } = await import('@smithy/core/protocols');
      const cases: Record<string, string>[] = [
        { 'x-amz-retry-after': '1500' },
        { 'Retry-After': '3' },
        { 'retry-after': '2.5' },
        { 'retry-after': 'Fri, 04 Dec 2026 12:00:07 GMT' },
        { 'retry-after': 'soon' },
        { 'x-amz-retry-after': 'x' },
        {},
      ];
      for (const headers of cases) {
        const response = new HttpResponse({ statusCode: 400, headers });
        expect(ours(response)?.getTime(), JSON.stringify(headers)).toBe(theirs(response)?.getTime());
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('AdaptiveRetryStrategy is the standard strategy (the rate limiter is a no-op in the bundles): same attempts and tokens', async () => {
    const { AdaptiveRetryStrategy } = await shim<{
      AdaptiveRetryStrategy: new (n: number) => { maxAttempts(): Promise<number>; acquireInitialRetryToken(s: string): Promise<{ getRetryCount(): number }> };
    }>('adaptive-retry.mjs');
    const strategy = new AdaptiveRetryStrategy(4);
    expect(await strategy.maxAttempts()).toBe(4);
    expect((await strategy.acquireInitialRetryToken('dynamodb')).getRetryCount()).toBe(0);
  });
});

describe("the Lambda bundles' event-signing and partitions trims", () => {
  const require = createRequire(import.meta.url);
  const sdkFile = (pkg: string, ...path: string[]) => join(dirname(require.resolve(pkg)), '..', 'dist-es', ...path);

  it('HeaderFormatter stands in only while SignatureV4 uses it in signMessage alone (event streams), and throws there', async () => {
    const signer = readFileSync(sdkFile('@smithy/signature-v4', 'SignatureV4.js'), 'utf8');
    const uses = signer.split('\n').filter((l) => l.includes('headerFormatter'));
    expect(uses).toHaveLength(2);
    expect(uses[0]).toMatch(/headerFormatter = new HeaderFormatter\(\)/);
    const signMessage = signer.slice(signer.indexOf('async signMessage('));
    expect(signMessage.slice(0, signMessage.indexOf('\n    }\n'))).toContain('this.headerFormatter.format(');
    const { HeaderFormatter } = await shim<{ HeaderFormatter: new () => { format(h: object): Uint8Array } }>('no-event-signing.mjs');
    expect(() => new HeaderFormatter().format({})).toThrow(/event-stream message signing is not part of fenceq Lambda bundles/);
  });

  it('the partitions table keeps every region and partition output, less the descriptions; a module of another layout fails the build', async () => {
    const { withoutRegionDescriptions } = await shim<{ withoutRegionDescriptions: (source: string, file: string) => string }>('slim-partitions.mjs');
    const file = sdkFile('@aws-sdk/core', 'submodules', 'client', 'util-endpoints', 'lib', 'aws', 'partitions.js');
    const source = readFileSync(file, 'utf8');
    type Info = { partitions: { id: string; outputs: object; regionRegex: string; regions: Record<string, object> }[] };
    const parse = (text: string): Info => JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)) as Info;
    const real = parse(source);
    const slim = parse(withoutRegionDescriptions(source, file));
    expect(slim.partitions.map((p) => [p.id, p.outputs, p.regionRegex, Object.keys(p.regions)])).toEqual(
      real.partitions.map((p) => [p.id, p.outputs, p.regionRegex, Object.keys(p.regions)]),
    );
    expect(slim.partitions.flatMap((p) => Object.values(p.regions)).every((r) => Object.keys(r).length === 0)).toBe(true);
    expect(() => withoutRegionDescriptions('export default {};', 'x.js')).toThrow(/not the partitions module/);
    expect(() => withoutRegionDescriptions('export const partitionsInfo = {"partitions":[{"id":"aws"}]};', 'x.js')).toThrow(/without regions or outputs/);
    expect(() =>
      withoutRegionDescriptions(
        'export const partitionsInfo = {"partitions":[{"id":"aws","outputs":{},"regions":{"r":{"description":"d","dnsSuffix":"x"}}}]};',
        'x.js',
      ),
    ).toThrow(/region r carries more than a description/);
  });
});

describe("the Lambda bundles' document client: BatchGetCommand", () => {
  it('translates keys in, items and unprocessed keys out, as lib-dynamodb does', async () => {
    type Low = { input: { RequestItems: Record<string, { Keys: unknown[]; ConsistentRead?: boolean }> } };
    const { BatchGetCommand } = await shim<{
      BatchGetCommand: new (input: object) => {
        toLow(m: (v: unknown) => unknown): Low;
        fromLow(o: object, u: (v: unknown) => unknown): Record<string, unknown>;
      };
    }>('document-client.mjs');
    const { marshall, unmarshall } = await import('@aws-sdk/util-dynamodb');
    // Per attribute value, as the shim's client passes them (lib-dynamodb's options).
    const m = (v: unknown) => marshall(v, { convertTopLevelContainer: true });
    const u = (v: unknown) => unmarshall(v as Parameters<typeof unmarshall>[0], { convertWithoutMapWrapper: true });
    const cmd = new BatchGetCommand({ RequestItems: { t: { Keys: [{ id: 'a' }, { id: 'b' }], ConsistentRead: true } } });
    expect(cmd.toLow(m).input.RequestItems).toEqual({ t: { Keys: [{ id: { S: 'a' } }, { id: { S: 'b' } }], ConsistentRead: true } });
    const out = cmd.fromLow(
      { Responses: { t: [{ id: { S: 'a' }, n: { N: '1' }, s: { SS: ['x'] } }] }, UnprocessedKeys: { t: { Keys: [{ id: { S: 'b' } }], ConsistentRead: true } } },
      u,
    );
    expect(out).toEqual({ Responses: { t: [{ id: 'a', n: 1, s: new Set(['x']) }] }, UnprocessedKeys: { t: { Keys: [{ id: 'b' }], ConsistentRead: true } } });
    expect(cmd.fromLow({}, u)).toEqual({ Responses: undefined, UnprocessedKeys: undefined });
  });
});
