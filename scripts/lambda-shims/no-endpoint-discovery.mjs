// Stands in for @aws-sdk/middleware-endpoint-discovery (with @aws-sdk/endpoint-cache and its LRU
// cache, about 2 KB) inside fenceq's Lambda bundles. In this SDK no DynamoDB command carries the
// discovery middleware (none imports getEndpointDiscoveryPlugin: DynamoDB discovery is optional and
// off by default), so the client only stores the settings: DynamoDBClient calls
// resolveEndpointDiscoveryConfig and its runtime config reads NODE_ENDPOINT_DISCOVERY_CONFIG_OPTIONS
// into a provider that only the middleware would call. Both stay, the cache nobody reads goes. An
// SDK whose commands import the plugin fails the build here (no such export) rather than lose it.
export const NODE_ENDPOINT_DISCOVERY_CONFIG_OPTIONS = {
  environmentVariableSelector: () => undefined,
  configFileSelector: () => undefined,
  default: undefined,
};

export const resolveEndpointDiscoveryConfig = (input, { endpointDiscoveryCommandCtor }) => {
  const { endpointDiscoveryEnabled, endpointDiscoveryEnabledProvider } = input;
  return Object.assign(input, {
    endpointDiscoveryCommandCtor,
    endpointDiscoveryEnabled: endpointDiscoveryEnabled !== undefined ? () => Promise.resolve(endpointDiscoveryEnabled) : endpointDiscoveryEnabledProvider,
    isClientEndpointDiscoveryEnabled: endpointDiscoveryEnabled !== undefined,
  });
};
