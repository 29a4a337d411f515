const LOOPBACK = /^https?:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?\/?$/;

/** Endpoint, region and placeholder credentials for a loopback emulator; the SDK's defaults otherwise. */
export function localClientConfig(opts: { endpoint?: string; region?: string }) {
  const local = opts.endpoint !== undefined && LOOPBACK.test(opts.endpoint);
  const haveCreds = Boolean(process.env.AWS_ACCESS_KEY_ID || process.env.AWS_PROFILE);
  return {
    endpoint: opts.endpoint,
    region: opts.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? (opts.endpoint ? 'us-east-1' : undefined),
    ...(local && !haveCreds ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  };
}
