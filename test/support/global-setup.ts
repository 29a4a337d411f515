import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startDynalite, type EmulatorProcess } from '../../src/local/emulator.js';
import { startFauxqs } from '../../src/local/sqs-emulator.js';
import { startValidatingProxy, type ValidatingProxy } from '../../tools/validating-proxy.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    sqsEndpoint: string;
    /** This run's scratch folder (also TMPDIR for every test file and child): removed when the run ends. */
    runDir: string;
  }
}

let emulator: EmulatorProcess | undefined;
let sqsEmulator: EmulatorProcess | undefined;
let validating: ValidatingProxy | undefined;
let runDir: string | undefined;
let givenTmpdir: string | undefined;

/**
 * Starts dynalite in its own process unless DYNAMODB_ENDPOINT names another endpoint, and fauxqs
 * (SQS) unless SQS_ENDPOINT does. DYNAMODB_VALIDATE=1 puts the validating proxy
 * (tools/validating-proxy.ts) in front of the DynamoDB endpoint: requests AWS refuses are refused.
 * The run's temp files go to a scratch folder of its own (TMPDIR), removed at teardown.
 */
export async function setup(project: TestProject): Promise<void> {
  // One scratch folder for the run, made TMPDIR before the emulators and test files start (they
  // inherit it), so whatever a test, a CDK synth or a child process leaves in the temp folder goes
  // with the folder at teardown, passed or failed.
  givenTmpdir = process.env.TMPDIR;
  runDir = mkdtempSync(join(tmpdir(), 'fenceq-test-run-'));
  process.env.TMPDIR = runDir;
  project.provide('runDir', runDir);
  try {
    const givenSqs = process.env.SQS_ENDPOINT;
    if (givenSqs) project.provide('sqsEndpoint', givenSqs);
    else {
      sqsEmulator = await startFauxqs();
      project.provide('sqsEndpoint', sqsEmulator.endpoint);
    }
    const target = process.env.DYNAMODB_ENDPOINT || (emulator = await startDynalite()).endpoint;
    if (process.env.DYNAMODB_VALIDATE === '1') validating = await startValidatingProxy(target);
    project.provide('dynamodbEndpoint', validating?.endpoint ?? target);
  } catch (err) {
    await teardown(); // a setup that throws gets no teardown from vitest
    throw err;
  }
}

/** Stops the emulators and the proxy this run started, and removes the run's scratch folder. */
export async function teardown(): Promise<void> {
  try {
    await validating?.close();
    await Promise.all([emulator?.stop(), sqsEmulator?.stop()]);
  } finally {
    if (givenTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = givenTmpdir;
    if (runDir) rmSync(runDir, { recursive: true, force: true, maxRetries: 3 });
  }
}
