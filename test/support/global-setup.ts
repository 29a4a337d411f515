import type { TestProject } from 'vitest/node';
import { startDynalite, type EmulatorProcess } from '../../src/local/emulator.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

let emulator: EmulatorProcess | undefined;

/** Starts dynalite in its own process unless DYNAMODB_ENDPOINT names another endpoint. */
export async function setup(project: TestProject): Promise<void> {
  const given = process.env.DYNAMODB_ENDPOINT;
  if (given) {
    project.provide('dynamodbEndpoint', given);
    return;
  }
  emulator = await startDynalite();
  project.provide('dynamodbEndpoint', emulator.endpoint);
}

/** Stops the emulator this run started. */
export async function teardown(): Promise<void> {
  await emulator?.stop();
}
