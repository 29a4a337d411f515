// Stands in for @smithy/core's shared config file loader (~/.aws/config and ~/.aws/credentials,
// about 3 KB with its INI parser) inside fenceq's Lambda bundles. A Lambda function has no such
// files: its region, credentials and SDK settings come from the environment (AWS_REGION,
// AWS_ACCESS_KEY_ID, AWS_MAX_ATTEMPTS, ...), which the SDK still reads. Reading no file also
// spares each cold start two failed file reads.
export const CONFIG_PREFIX_SEPARATOR = '.';
export const loadSharedConfigFiles = async () => ({ configFile: {}, credentialsFile: {} });
