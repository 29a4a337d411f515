import { LambdaClient } from '@aws-sdk/client-lambda';
import { clientConfig } from '../client-config.js';

/** Builds a Lambda client; a loopback endpoint (the local invoke server) gets placeholder credentials when none are set. */
export function lambdaClient(opts: { endpoint?: string; region?: string } = {}): LambdaClient {
  return new LambdaClient(clientConfig(opts));
}
