// Stands in for @smithy/core's S3 endpoint customizations (service-customizations/s3.js, about
// 0.8 KB) inside fenceq's Lambda bundles. The endpoint middleware calls resolveParamsForS3 only
// when the client's serviceId is "s3"; the bundles hold DynamoDB and SQS clients alone.
export const resolveParamsForS3 = () => {
  throw new Error("S3 endpoint rules are not part of fenceq's Lambda bundles (scripts/lambda-shims/no-s3-endpoints.mjs)");
};
