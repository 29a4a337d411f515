/**
 * The few Lambda shapes fenceq's public types name, defined here so the published declarations
 * need no `@types/aws-lambda` (Lambda's own context object satisfies {@link LambdaContext}).
 */

/** The part of Lambda's invocation context fenceq reads. */
export interface LambdaContext {
  readonly awsRequestId: string;
  readonly functionName: string;
  /** Milliseconds left before the invocation times out. */
  getRemainingTimeInMillis(): number;
}

/** A partial batch response for an SQS event source with `reportBatchItemFailures`. */
export interface SqsBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

/**
 * Largest request payload of a synchronous (RequestResponse) Lambda invocation, in bytes: AWS's
 * "6 MB" quota. Lambda answers a larger one with HTTP 413 `RequestEntityTooLargeException`.
 */
export const SYNC_INVOKE_REQUEST_BYTES = 6 * 1024 * 1024;
