import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validations, type Duration } from 'aws-cdk-lib';
import { Architecture, LoggingFormat, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** The fenceq package root (infra/ lives in it, or in dist/ inside it once built). */
const PACKAGE_ROOT = [join(dirname(fileURLToPath(import.meta.url)), '..'), join(dirname(fileURLToPath(import.meta.url)), '..', '..')].find(
  (dir) => existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'functions')),
)!;

/** Path of one of fenceq's own handlers (`functions/<name>.ts`, or the built `.js`). */
export function handlerEntry(name: 'api' | 'admin' | 'reclaim' | 'worker'): string {
  const ts = join(PACKAGE_ROOT, 'functions', `${name}.ts`);
  return existsSync(ts) ? ts : join(PACKAGE_ROOT, 'dist', 'functions', `${name}.js`);
}

/** What differs between fenceq's functions. */
export interface JobFunctionProps {
  readonly entry: string;
  readonly description: string;
  readonly timeout: Duration;
  readonly memorySize: number;
  readonly logRetention: RetentionDays;
  readonly environment: Record<string, string>;
}

// ESM output so handlers may use top-level await; the banner gives bundled CommonJS code a `require`.
const REQUIRE_SHIM = "import { createRequire as __fenceqCreateRequire } from 'node:module'; const require = __fenceqCreateRequire(import.meta.url);";

/**
 * A fenceq Lambda function: Node.js 22 on arm64, bundled by the local esbuild (never Docker) with
 * every dependency inside (the AWS SDK included, so what was tested is what runs), JSON logs in
 * its own log group with a retention. Its role starts empty but for writing to that log group
 * (not the AWS-managed basic execution policy, which may create any log group anywhere).
 */
export function jobFunction(scope: Construct, id: string, props: JobFunctionProps): NodejsFunction {
  const logGroup = new LogGroup(scope, `${id}Logs`, { retention: props.logRetention });
  const role = new Role(scope, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com'), description: `fenceq ${id} function` });
  logGroup.grantWrite(role);
  const fn = new NodejsFunction(scope, id, {
    entry: props.entry,
    handler: 'handler',
    description: props.description,
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    timeout: props.timeout,
    memorySize: props.memorySize,
    // Stack traces point into the TypeScript sources (the bundles carry source maps).
    environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
    logGroup,
    role,
    loggingFormat: LoggingFormat.JSON,
    bundling: {
      forceDockerBundling: false,
      format: OutputFormat.ESM,
      target: 'node22',
      mainFields: ['module', 'main'],
      banner: REQUIRE_SHIM,
      externalModules: [],
      minify: true,
      sourceMap: true,
      sourcesContent: false,
    },
  });
  Validations.of(fn).acknowledge({
    id: 'AwsSolutions::AwsSolutions-L1',
    reason: 'fenceq targets and is tested on Node.js 22 (an LTS line Lambda supports); a runtime upgrade is a deliberate, tested change',
  });
  return fn;
}
