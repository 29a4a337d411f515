// Stands in for @smithy/core's AdaptiveRetryStrategy (about 0.75 KB) inside fenceq's Lambda
// bundles. Only the SDK's `adaptive` retry mode (AWS_RETRY_MODE=adaptive) builds one; fenceq's
// functions use the default `standard` mode, and its rate limiter is already a no-op here
// (rate-limiter.mjs), so `adaptive` is `standard`: retries with backoff, no client-side rate limit.
export { StandardRetryStrategy as AdaptiveRetryStrategy } from '@smithy/core/retry';
