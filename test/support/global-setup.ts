import type { TestProject } from 'vitest/node';
import { startDynalite, type EmulatorProcess } from '../../src/local/emulator.js';
import { startFauxqs } from '../../src/local/sqs-emulator.js';
import { startValidatingProxy, type ValidatingProxy } from '../../tools/validating-proxy.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    sqsEndpoint: string;
  }
}

let emulator: EmulatorProcess | undefined;
let sqsEmulator: EmulatorProcess | undefined;
let validating: ValidatingProxy | undefined;

/**
 * Starts dynalite in its own process unless DYNAMODB_ENDPOINT names another endpoint, and fauxqs
 * (SQS) unless SQS_ENDPOINT does. DYNAMODB_VALIDATE=1 puts the validating proxy
 * (tools/validating-proxy.ts) in front of the DynamoDB endpoint: requests AWS refuses are refused.
 */
export async function setup(project: TestProject): Promise<void> {
  const givenSqs = process.env.SQS_ENDPOINT;
  if (givenSqs) project.provide('sqsEndpoint', givenSqs);
  else {
    sqsEmulator = await startFauxqs();
    project.provide('sqsEndpoint', sqsEmulator.endpoint);
  }
  const target = process.env.DYNAMODB_ENDPOINT || (emulator = await startDynalite()).endpoint;
  if (process.env.DYNAMODB_VALIDATE === '1') validating = await startValidatingProxy(target);
  project.provide('dynamodbEndpoint', validating?.endpoint ?? target);
}

/** Stops the emulators and the proxy this run started. */
export async function teardown(): Promise<void> {
  await validating?.close();
  await Promise.all([emulator?.stop(), sqsEmulator?.stop()]);
}
