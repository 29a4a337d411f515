import { Duration } from 'aws-cdk-lib';
import type { Node } from 'constructs';
import { ValidationError } from '../src/errors.js';
import type { FenceqStackProps } from './fenceq-stack.js';

/** The context keys `cdk deploy -c key=value` (or cdk.json's "context") sets, and what each means. */
export const CONTEXT_KEYS = {
  stackName: 'fenceq:stackName',
  tableName: 'fenceq:tableName',
  reclaimRateMinutes: 'fenceq:reclaimRateMinutes',
  workerTimeoutSeconds: 'fenceq:workerTimeoutSeconds',
  workerQueues: 'fenceq:workerQueues',
  alarmEmail: 'fenceq:alarmEmail',
} as const;

/** The stack's name and props from context; an unset key keeps the construct's default, a malformed one throws ValidationError. */
export function stackPropsFromContext(node: Node): { stackName: string; props: FenceqStackProps } {
  const get = (key: keyof typeof CONTEXT_KEYS): string | undefined => {
    const v: unknown = node.tryGetContext(CONTEXT_KEYS[key]);
    return v === undefined || v === '' ? undefined : String(v);
  };
  const whole = (key: keyof typeof CONTEXT_KEYS): number | undefined => {
    const v = get(key);
    if (v !== undefined && !/^[1-9]\d*$/.test(v)) throw new ValidationError(CONTEXT_KEYS[key], v, 'must be a positive whole number');
    return v === undefined ? undefined : Number(v);
  };
  const rate = whole('reclaimRateMinutes');
  const timeout = whole('workerTimeoutSeconds');
  const email = get('alarmEmail');
  if (email !== undefined && !/^[^@\s]+@[^@\s]+$/.test(email)) throw new ValidationError(CONTEXT_KEYS.alarmEmail, email, 'must be an e-mail address');
  return {
    stackName: get('stackName') ?? 'Fenceq',
    props: {
      alarmEmail: email,
      queue: {
        tableName: get('tableName'),
        reclaimRate: rate === undefined ? undefined : Duration.minutes(rate),
        workerTimeout: timeout === undefined ? undefined : Duration.seconds(timeout),
        workerQueues: get('workerQueues')
          ?.split(',')
          .map((q) => q.trim()),
      },
    },
  };
}
