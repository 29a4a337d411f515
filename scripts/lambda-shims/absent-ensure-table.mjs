// Stands in for src/store/core/ensure-table.ts (and the CreateTable / DescribeTable / UpdateTimeToLive
// schemas it pulls from the DynamoDB client, about 7 KB) inside fenceq's Lambda bundles: the
// deployed table is created by the stack, and no function calls JobQueue.ensureTable().
export async function ensureTable() {
  throw new Error("ensureTable() is not part of fenceq's Lambda bundles: the stack creates the table");
}
