/** A producer: enqueue from anywhere that can write the table (FENCEQ_TABLE_NAME from the stack's outputs). */
import { JobQueue } from 'fenceq';

const queue = new JobQueue({ tableName: process.env.FENCEQ_TABLE_NAME! });
const { outcome } = await queue.enqueue({ queue: 'email', payload: { to: 'ada@example.com' } });
console.log(outcome);
