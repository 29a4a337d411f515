// Stands in for @smithy/core/event-streams inside fenceq's Lambda bundles: DynamoDB and SQS have
// no event-stream operation, so the SDK's lazy import of it is never reached there.
const unsupported = () => {
  throw new Error('event streams are not part of fenceq Lambda bundles');
};
export const EventStreamSerde = unsupported;
export const eventStreamSerdeProvider = unsupported;
