/** Pieces of a DynamoDB expression: the text and the names and values it refers to. */
export interface ExpressionParts {
  readonly UpdateExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
  readonly ExpressionAttributeValues: Record<string, unknown>;
}

/**
 * Builds `SET #a = :a, ... REMOVE #b, ...` with every attribute name escaped, so a transition
 * lists the fields it writes as data. Values under `setExpr` are raw expression text
 * (`#attempts + :one`) whose names and values the caller supplies in `names` and `values`.
 */
export function buildUpdate(parts: {
  set?: Record<string, unknown>;
  setExpr?: Record<string, string>;
  remove?: readonly string[];
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}): ExpressionParts {
  const names: Record<string, string> = { ...parts.names };
  const values: Record<string, unknown> = { ...parts.values };
  const sets: string[] = [];
  for (const [attr, value] of Object.entries(parts.set ?? {})) {
    if (value === undefined) continue;
    names[`#${attr}`] = attr;
    values[`:${attr}`] = value;
    sets.push(`#${attr} = :${attr}`);
  }
  for (const [attr, expr] of Object.entries(parts.setExpr ?? {})) {
    names[`#${attr}`] = attr;
    sets.push(`#${attr} = ${expr}`);
  }
  const removes = (parts.remove ?? []).map((attr) => {
    names[`#${attr}`] = attr;
    return `#${attr}`;
  });
  const text = [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : ''].filter(Boolean).join(' ');
  return { UpdateExpression: text, ExpressionAttributeNames: names, ExpressionAttributeValues: values };
}
