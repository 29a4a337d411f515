/**
 * FargateWorkers' optional metrics port: it sets FENCEQ_METRICS_PORT (the variable `fenceq work`
 * reads) and maps the container port; without it, neither; a port outside 1-65535 is refused.
 */
import { Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { ContainerImage } from 'aws-cdk-lib/aws-ecs';
import { beforeAll, describe, expect, it } from 'vitest';
import { FargateWorkers } from '../../infra/fargate-workers.js';
import { FencedJobQueue } from '../../infra/fenced-job-queue.js';
import { ValidationError } from '../../src/errors.js';
import { WORK_ENV } from '../../src/worker/work-env.js';
import { only, synthOnce, testApp } from './synth.js';

const IMAGE = ContainerImage.fromRegistry('public.ecr.aws/example/worker:1.0.0');
let t: Template;
let stack: Stack;
let jobs: FencedJobQueue;

beforeAll(() => {
  const app = testApp({ bundle: false });
  stack = new Stack(app, 'Metrics');
  jobs = new FencedJobQueue(stack, 'Jobs');
  const scraped = new FargateWorkers(stack, 'Scraped', { queue: jobs, image: IMAGE, queues: ['email'], metricsPort: 9464 });
  new FargateWorkers(stack, 'Plain', { queue: jobs, image: IMAGE, queues: ['email'], cluster: scraped.cluster });
  const out = synthOnce(app, [stack]);
  if (out.error) throw out.error;
  [t] = out.templates as [Template];
}, 180_000);

const container = (prefix: string) => only(t, 'AWS::ECS::TaskDefinition', `${prefix}Task`)[1].Properties.ContainerDefinitions[0];
const envOf = (prefix: string) => Object.fromEntries((container(prefix).Environment as { Name: string; Value: unknown }[]).map((e) => [e.Name, e.Value]));

describe('FargateWorkers metricsPort', () => {
  it('sets FENCEQ_METRICS_PORT and maps the container port; without it, neither', () => {
    expect(envOf('Scraped')[WORK_ENV.metricsPort]).toBe('9464');
    expect(container('Scraped').PortMappings).toEqual([expect.objectContaining({ ContainerPort: 9464, Name: 'metrics', Protocol: 'tcp' })]);
    expect(envOf('Plain')[WORK_ENV.metricsPort]).toBeUndefined();
    expect(container('Plain').PortMappings).toBeUndefined();
  });

  it('refuses a port outside 1-65535, naming the prop', () => {
    for (const metricsPort of [0, 65_536, 1.5]) {
      expect(
        () => new FargateWorkers(stack, `Bad${String(metricsPort).replace('.', '_')}`, { queue: jobs, image: IMAGE, queues: ['email'], metricsPort }),
      ).toThrow(expect.objectContaining({ name: 'ValidationError', field: 'props.metricsPort', value: metricsPort }));
    }
    expect(() => new FargateWorkers(stack, 'BadType', { queue: jobs, image: IMAGE, queues: ['email'], metricsPort: 0 })).toThrow(ValidationError);
  });
});
