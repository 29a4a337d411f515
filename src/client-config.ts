/**
 * The one client factory's settings: endpoint, region and, for a loopback emulator, placeholder
 * credentials. Every AWS SDK client fenceq builds (the JobQueue's DynamoDB client, the CLI's, the
 * SQS and Lambda clients) takes its config from here, so a local endpoint is recognised the same
 * way everywhere. Pure data: the caller constructs the client (and adds its own retry and timeout
 * settings), so this module imports no SDK.
 */

const LOOPBACK = /^https?:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?\/?$/;

/** Endpoint, region and credentials an SDK client is constructed with. */
export interface ClientConfig {
  readonly endpoint: string | undefined;
  readonly region: string | undefined;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/**
 * Settings for a client of `endpoint` (undefined: the service's own). The region is `region`,
 * else AWS_REGION or AWS_DEFAULT_REGION, else `us-east-1` when an endpoint is given (an emulator
 * ignores it; the SDK needs one); a loopback endpoint gets placeholder credentials when the
 * environment names none (AWS_ACCESS_KEY_ID or AWS_PROFILE), so `fenceq start` and tests need no
 * AWS account. Anything else is left to the SDK's defaults.
 */
export function clientConfig(opts: { endpoint?: string; region?: string }, env: NodeJS.ProcessEnv = process.env): ClientConfig {
  const local = opts.endpoint !== undefined && LOOPBACK.test(opts.endpoint);
  const haveCreds = Boolean(env.AWS_ACCESS_KEY_ID || env.AWS_PROFILE);
  return {
    endpoint: opts.endpoint,
    region: opts.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || (opts.endpoint ? 'us-east-1' : undefined)),
    ...(local && !haveCreds ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  };
}
