// Stands in for @smithy/core's DefaultRateLimiter (about 2.6 KB) inside fenceq's Lambda bundles.
// Only the SDK's `adaptive` retry mode (AWS_RETRY_MODE=adaptive) builds one, to slow a client's
// own sending after throttling; fenceq's functions use the default `standard` mode. Here the
// limiter never waits, so `adaptive` behaves as `standard` (retries with backoff, no client-side
// rate limiting).
export class DefaultRateLimiter {
  async getSendToken() {}
  updateClientSendingRate() {}
}
