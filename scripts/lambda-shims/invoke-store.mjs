// Stands in for @aws/lambda-invoke-store (about 2.2 KB) inside fenceq's Lambda bundles. Its one
// user is the SDK's recursion-detection middleware, which asks InvokeStore.getInstanceAsync() for
// the invocation's X-Ray trace id and W3C trace context (traceparent, tracestate, baggage) and
// falls back to the _X_AMZN_TRACE_ID environment variable. Those values are only ever put there
// by the Lambda runtime, in the store it publishes as globalThis.awslambda.InvokeStore before it
// loads the handler; the real module returns that store when it is there, and otherwise makes an
// empty one of its own that nothing in a bundle fills (only the runtime calls `run`). This returns
// the runtime's store, or none: the same headers either way, without the two empty store classes.
const NO_GLOBAL = ['true', '1'].includes(process.env.AWS_LAMBDA_NODEJS_NO_GLOBAL_AWSLAMBDA ?? '');

export const InvokeStore = {
  async getInstanceAsync() {
    return NO_GLOBAL ? undefined : globalThis.awslambda?.InvokeStore;
  },
};
