// Stands in for @smithy/signature-v4's HeaderFormatter (about 2 KB: the binary header encoding of
// event-stream messages, with its Int64) inside fenceq's Lambda bundles. SignatureV4 builds one in
// its constructor and uses it in signMessage alone, which signs the messages of an event stream;
// DynamoDB and SQS have no event-stream operation (see event-streams.mjs), so requests are signed
// as before and only signMessage, never reached, would throw.
export class HeaderFormatter {
  format() {
    throw new Error('event-stream message signing is not part of fenceq Lambda bundles');
  }
}
