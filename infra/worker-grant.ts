import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { ACCESS, grantAccess } from './access.js';
import type { FencedJobQueue } from './fenced-job-queue.js';

/**
 * The worker grant of a Fargate task role: on the direct transport exactly the Lambda worker's
 * table profile (ACCESS.worker: Get/UpdateItem, Query on the work index, SendMessage to the wake
 * and dead queues), on the Lambda transport lambda:InvokeFunction on the API function alone.
 */
export function grantWorker(queue: FencedJobQueue, grantee: IGrantable, transport: 'direct' | 'lambda'): void {
  if (transport === 'lambda') queue.grantInvokeApi(grantee);
  else grantAccess(grantee, ACCESS.worker, { table: queue.table, wake: queue.queues.wake, dead: queue.queues.dead });
}
