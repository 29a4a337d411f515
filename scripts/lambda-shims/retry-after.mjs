// Stands in for @smithy/core's parseRetryAfterHeader (about 0.7 KB with its RFC 7231 date parser)
// inside fenceq's Lambda bundles. It keeps the forms an AWS service sends: `x-amz-retry-after`
// (milliseconds) and `retry-after` in seconds; a `retry-after` date (no AWS service fenceq calls
// sends one) is read with Date.parse. The hint only lengthens the SDK's backoff before a retry.
export function parseRetryAfterHeader(response) {
  const headers = response?.headers ?? {};
  for (const name of Object.keys(headers)) {
    const h = name.toLowerCase();
    const v = headers[name];
    if (h === 'x-amz-retry-after') {
      const ms = Number(v);
      return isNaN(ms) ? undefined : new Date(Date.now() + ms);
    }
    if (h === 'retry-after') {
      const at = /^\d+(\.\d+)?$/.test(v) ? Date.now() + Number(v) * 1000 : Date.parse(v);
      return isNaN(at) ? undefined : new Date(at);
    }
  }
}
