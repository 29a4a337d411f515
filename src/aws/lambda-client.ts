import { LambdaClient } from '@aws-sdk/client-lambda';
import { clientConfig } from '../client-config.js';

/**
 * Builds a Lambda client; a loopback endpoint (the local invoke server) gets placeholder
 * credentials when none are set. `maxAttempts` (per call, first included) defaults to the SDK's.
 */
export function lambdaClient(opts: { endpoint?: string; region?: string; maxAttempts?: number } = {}): LambdaClient {
  return new LambdaClient({ ...clientConfig(opts), ...(opts.maxAttempts === undefined ? {} : { maxAttempts: opts.maxAttempts }) });
}
