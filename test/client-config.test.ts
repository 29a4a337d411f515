import { describe, expect, it } from 'vitest';
import { clientConfig } from '../src/client-config.js';

describe('the one client factory (clientConfig)', () => {
  it('gives a loopback endpoint placeholder credentials and a region when the environment names none', () => {
    for (const endpoint of ['http://127.0.0.1:8000', 'http://localhost:4566/', 'http://[::1]:9']) {
      expect(clientConfig({ endpoint }, {})).toEqual({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    }
  });

  it('leaves credentials to the SDK when the environment has some, or the endpoint is not on loopback', () => {
    expect(clientConfig({ endpoint: 'http://127.0.0.1:8000' }, { AWS_PROFILE: 'dev' }).credentials).toBeUndefined();
    expect(clientConfig({ endpoint: 'http://127.0.0.1:8000' }, { AWS_ACCESS_KEY_ID: 'AKIA' }).credentials).toBeUndefined();
    expect(clientConfig({ endpoint: 'https://dynamodb.eu-west-1.amazonaws.com' }, {}).credentials).toBeUndefined();
    expect(clientConfig({ endpoint: 'http://127.0.0.1.example.com:80' }, {}).credentials).toBeUndefined();
  });

  it('takes the region from the caller, then AWS_REGION, then AWS_DEFAULT_REGION; none without an endpoint', () => {
    expect(clientConfig({ region: 'ap-south-1' }, { AWS_REGION: 'eu-west-1' }).region).toBe('ap-south-1');
    expect(clientConfig({ endpoint: 'http://127.0.0.1:1' }, { AWS_REGION: 'eu-west-1', AWS_DEFAULT_REGION: 'us-west-2' }).region).toBe('eu-west-1');
    expect(clientConfig({}, { AWS_DEFAULT_REGION: 'us-west-2' }).region).toBe('us-west-2');
    expect(clientConfig({ endpoint: 'http://127.0.0.1:1' }, { AWS_REGION: '' }).region).toBe('us-east-1');
    expect(clientConfig({}, {})).toEqual({ endpoint: undefined, region: undefined });
  });
});
