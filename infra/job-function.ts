import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validations, type Duration } from 'aws-cdk-lib';
import { Architecture, Code, Function as LambdaFunction, LoggingFormat, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** The fenceq package root (infra/ lives in it, or in dist/ inside it once built). */
export const PACKAGE_ROOT = [join(dirname(fileURLToPath(import.meta.url)), '..'), join(dirname(fileURLToPath(import.meta.url)), '..', '..')].find(
  (dir) => existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bin', 'fenceq.js')),
)!;

/** Where fenceq's pre-bundled function `name` is (`dist/lambda/<name>/index.mjs`, built by `npm run build`). */
function bundledCode(name: string): string {
  const dir = join(PACKAGE_ROOT, 'dist', 'lambda', name);
  if (!existsSync(join(dir, 'index.mjs'))) {
    throw new Error(`fenceq's Lambda bundle ${name} is missing at ${dir}: run \`npm run build\` in ${PACKAGE_ROOT}`);
  }
  return dir;
}

/** What differs between fenceq's functions. */
export interface JobFunctionProps {
  /** Your worker's entry file, bundled at synth; absent for fenceq's own functions, which deploy from their bundles. */
  readonly entry?: string;
  /** The pre-bundled function under dist/lambda/ (fenceq's own functions). */
  readonly bundle?: string;
  readonly description: string;
  readonly timeout: Duration;
  readonly memorySize: number;
  readonly logRetention: RetentionDays;
  readonly environment: Record<string, string>;
  /** Reserved concurrency. @default none (the account's unreserved pool) */
  readonly reservedConcurrentExecutions?: number;
}

// ESM output so handlers may use top-level await; the banner gives bundled CommonJS code a `require`.
const REQUIRE_SHIM = "import { createRequire as __fenceqCreateRequire } from 'node:module'; const require = __fenceqCreateRequire(import.meta.url);";

/**
 * A fenceq Lambda function: Node.js 22 on arm64, JSON logs in its own log group with a
 * retention. fenceq's own functions (`bundle`) deploy the bundle built into the package (every
 * dependency inside, the AWS SDK included, so what was tested is what runs; no bundler at your
 * synth); your worker (`entry`) is bundled at synth by your project's esbuild (never Docker) the
 * same way. Its role starts empty but for writing to that log group (not the AWS-managed basic
 * execution policy, which may create any log group anywhere).
 */
export function jobFunction(scope: Construct, id: string, props: JobFunctionProps): LambdaFunction {
  const logGroup = new LogGroup(scope, `${id}Logs`, { retention: props.logRetention });
  const role = new Role(scope, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com'), description: `fenceq ${id} function` });
  logGroup.grantWrite(role);
  const common = {
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
    reservedConcurrentExecutions: props.reservedConcurrentExecutions,
  };
  const fn =
    props.bundle !== undefined
      ? new LambdaFunction(scope, id, { ...common, code: Code.fromAsset(bundledCode(props.bundle)), handler: 'index.handler' })
      : new NodejsFunction(scope, id, {
          ...common,
          entry: props.entry,
          handler: 'handler',
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
