/**
 * Another writer, driven from inside a client's middleware: just before each request the
 * predicate picks, it bumps an item's `version`, so that request's guard loses its race, every
 * time and deterministically.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Bumps item `id`'s version before every request `picks` accepts; `count` says how many it bumped. */
export function bumpVersionBefore(
  client: DynamoDBClient,
  doc: DynamoDBDocumentClient,
  tableName: string,
  id: string,
  picks: (commandName: string, input: Record<string, unknown>) => boolean,
): { readonly count: number } {
  const bumps = { count: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (picks(context.commandName ?? '', args.input as Record<string, unknown>)) {
        bumps.count++;
        await doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { id },
            UpdateExpression: 'ADD #v :one',
            ExpressionAttributeNames: { '#v': 'version' },
            ExpressionAttributeValues: { ':one': 1 },
          }),
        );
      }
      return next(args);
    },
    { step: 'initialize', name: 'bump-version' },
  );
  return bumps;
}
