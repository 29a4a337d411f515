import type { TestProject } from 'vitest/node';
import { startDynalite, type EmulatorProcess } from '../../src/local/emulator.js';
import { startFauxqs } from '../../src/local/sqs-emulator.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    sqsEndpoint: string;
  }
}

let emulator: EmulatorProcess | undefined;
let sqsEmulator: EmulatorProcess | undefined;

/**
 * Starts dynalite in its own process unless DYNAMODB_ENDPOINT names another endpoint, and fauxqs
 * (SQS) unless SQS_ENDPOINT does.
 */
export async function setup(project: TestProject): Promise<void> {
  const givenSqs = process.env.SQS_ENDPOINT;
  if (givenSqs) project.provide('sqsEndpoint', givenSqs);
  else {
    sqsEmulator = await startFauxqs();
    project.provide('sqsEndpoint', sqsEmulator.endpoint);
  }
  const given = process.env.DYNAMODB_ENDPOINT;
  if (given) {
    project.provide('dynamodbEndpoint', given);
    return;
  }
  emulator = await startDynalite();
  project.provide('dynamodbEndpoint', emulator.endpoint);
}

/** Stops the emulators this run started. */
export async function teardown(): Promise<void> {
  await Promise.all([emulator?.stop(), sqsEmulator?.stop()]);
}
