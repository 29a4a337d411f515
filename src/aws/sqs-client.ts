import { SQSClient } from '@aws-sdk/client-sqs';
import { clientConfig } from '../client-config.js';

/** Builds an SQS client; a loopback endpoint (fauxqs) gets placeholder credentials when none are set. */
export function sqsClient(opts: { endpoint?: string; region?: string } = {}): SQSClient {
  return new SQSClient(clientConfig(opts));
}
