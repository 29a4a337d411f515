// Stands in for @smithy/core's EC2 instance metadata region lookup (about 1.2 KB) inside fenceq's
// Lambda bundles: the SDK asks IMDS only when no region is configured, and Lambda always sets
// AWS_REGION (there is no IMDS in Lambda to ask).
export const getInstanceMetadataRegion = async () => undefined;
