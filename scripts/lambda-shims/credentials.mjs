// Stands in for @aws-sdk/credential-provider-node inside fenceq's Lambda bundles. The Lambda
// runtime hands a function its role's credentials in the environment (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); the default chain's other sources (SSO, INI files,
// process, web identity, IMDS) never answer there and cost about 130 KB of bundle and its import.
import { fromEnv } from '@aws-sdk/credential-provider-env';

export const defaultProvider = (init) => fromEnv(init);
