/**
 * The IAM policies of a synthesized CloudFormation template, resolved to local ARNs: what the
 * IAM-enforcing proxy (iam-proxy.ts) evaluates each request against. Pure data in, data out.
 *
 * A role's identity policies are every `AWS::IAM::Policy` and `AWS::IAM::ManagedPolicy` that
 * names the role in `Roles`. `Ref`, `Fn::GetAtt` and `Fn::Join` (and the pseudo parameters) are
 * resolved through {@link LocalBindings}: the local table, queues and functions a logical id
 * stands for. A logical id with no binding resolves to an ARN that matches nothing, so a grant on
 * a resource the local stack does not have allows nothing.
 */
import { FenceqError } from '../errors.js';
import { isArray, isRecord } from '../type-guards.js';

/** The account and region local ARNs are made in. */
export const LOCAL_ACCOUNT = '000000000000';
/** The region of local ARNs. */
const LOCAL_REGION = 'us-east-1';

/** What one logical id stands for locally: its `Ref` value and its attributes (`Arn`, ...). */
export interface LocalResource {
  readonly ref: string;
  readonly attributes: Readonly<Record<string, string>>;
}

/** Local resources by logical id. */
export type LocalBindings = Readonly<Record<string, LocalResource>>;

/** An IAM policy document. */
export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: readonly Record<string, unknown>[];
}

/** A template the resolver cannot read (an intrinsic it does not know, a role policy it cannot see). */
class TemplatePolicyError extends FenceqError {
  override name = 'TemplatePolicyError';
}

/** The local ARN of a DynamoDB table. */
export function tableArn(tableName: string): string {
  return `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${tableName}`;
}

/** The local ARN of an SQS queue, from its name. */
export function queueArn(queueName: string): string {
  return `arn:aws:sqs:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${queueName}`;
}

/** The local ARN of a Lambda function. */
export function functionArn(name: string): string {
  return `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${name}`;
}

/** The local ARN of an IAM role (the principal of the proxy's decisions). */
export function roleArn(name: string): string {
  return `arn:aws:iam::${LOCAL_ACCOUNT}:role/${name}`;
}

/** The name of a queue from its URL (the last path segment), as SQS names it in its ARN. */
export function queueNameOfUrl(url: string): string {
  const name = new URL(url).pathname.split('/').filter(Boolean).pop();
  if (!name) throw new TemplatePolicyError(`not a queue URL: ${url}`);
  return name;
}

/** Bindings of a table (Ref = name, Arn) and queues (Ref = URL, Arn, QueueName) by logical id. */
export function bindTable(tableName: string): LocalResource {
  return { ref: tableName, attributes: { Arn: tableArn(tableName) } };
}

/** The binding of a queue by its URL. */
export function bindQueue(url: string): LocalResource {
  const name = queueNameOfUrl(url);
  return { ref: url, attributes: { Arn: queueArn(name), QueueName: name, QueueUrl: url } };
}

/** The binding of a function by its local name. */
export function bindFunction(name: string): LocalResource {
  return { ref: name, attributes: { Arn: functionArn(name) } };
}

/** The part of a synthesized template the resolver reads: its resources, by logical id. */
type Template = { readonly Resources: Readonly<Record<string, TemplateResource>> };

/** One resource of a template. */
type TemplateResource = { Type: string; Properties?: Record<string, unknown> };

/** Whether a template resource is `{ Type, Properties? }` with a string type and an object of properties. */
function isTemplateResource(r: unknown): r is TemplateResource {
  return isRecord(r) && typeof r.Type === 'string' && (r.Properties === undefined || isRecord(r.Properties));
}

/** Reads a synthesized template (JSON) as the resolver needs it; a TemplatePolicyError names a resource it cannot read. */
export function readTemplate(value: unknown): { Resources: Record<string, TemplateResource> } {
  if (!isRecord(value) || !isRecord(value.Resources)) throw new TemplatePolicyError('a template is an object with Resources');
  const resources: Record<string, TemplateResource> = {};
  for (const [id, r] of Object.entries(value.Resources)) {
    if (!isTemplateResource(r)) throw new TemplatePolicyError(`resource ${id} of the template is not { Type, Properties? }`);
    resources[id] = r;
  }
  return { ...value, Resources: resources };
}

const PSEUDO: Readonly<Record<string, string>> = {
  'AWS::AccountId': LOCAL_ACCOUNT,
  'AWS::Region': LOCAL_REGION,
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
};

/** An intrinsic the resolver cannot read (`Ref` to a non-string, `Fn::Join` without `[separator, parts]`). */
function unreadable(value: unknown): TemplatePolicyError {
  return new TemplatePolicyError(`cannot read the intrinsic in a policy: ${JSON.stringify(value).slice(0, 200)}`);
}

/** Resolves the intrinsics the CDK puts in policies (`Ref`, `Fn::GetAtt`, `Fn::Join`) against the bindings. */
function resolveValue(value: unknown, bindings: LocalBindings): unknown {
  if (isArray(value)) return value.map((v) => resolveValue(v, bindings));
  if (!isRecord(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === 'Ref') {
    const id = value.Ref;
    if (typeof id !== 'string') throw unreadable(value);
    return PSEUDO[id] ?? bindings[id]?.ref ?? `arn:aws:unbound:::${id}`;
  }
  if (keys.length === 1 && keys[0] === 'Fn::GetAtt') {
    const getAtt = value['Fn::GetAtt'];
    const [id, attr] = typeof getAtt === 'string' ? getAtt.split('.') : isArray(getAtt) ? getAtt : [];
    if (typeof id !== 'string' || typeof attr !== 'string') throw unreadable(value);
    return bindings[id]?.attributes[attr] ?? `arn:aws:unbound:::${id}.${attr}`;
  }
  if (keys.length === 1 && keys[0] === 'Fn::Join') {
    const join = value['Fn::Join'];
    if (!isArray(join) || typeof join[0] !== 'string' || !isArray(join[1])) throw unreadable(value);
    const sep = join[0];
    return join[1].map((part) => String(resolveValue(part, bindings))).join(sep);
  }
  if (keys.some((k) => k.startsWith('Fn::')))
    throw new TemplatePolicyError(`cannot resolve ${keys.join(', ')} in a policy: ${JSON.stringify(value).slice(0, 200)}`);
  return Object.fromEntries(keys.map((k) => [k, resolveValue(value[k], bindings)]));
}

/** A resolved policy document: `Statement` a list of objects, `Version` a string when present. */
function policyDocument(value: unknown, where: string): PolicyDocument {
  if (!isRecord(value) || !isArray(value.Statement) || (value.Version !== undefined && typeof value.Version !== 'string')) {
    throw new TemplatePolicyError(`the policy document of ${where} is not { Version?, Statement: [...] }`);
  }
  const statements = value.Statement.filter(isRecord);
  if (statements.length !== value.Statement.length) throw new TemplatePolicyError(`a statement of the policy document of ${where} is not an object`);
  return value.Version === undefined ? { Statement: statements } : { Version: value.Version, Statement: statements };
}

/** Whether a template property (`Roles`, `Queues`) is a list with an element that `matches`. */
function listHas(list: unknown, matches: (element: unknown) => boolean): boolean {
  return isArray(list) && list.some(matches);
}

/** The logical id of the role a function runs as (`Role: { Fn::GetAtt: [role, Arn] }`). */
export function roleOfFunction(template: Template, functionId: string): string {
  const fn = template.Resources[functionId];
  const roleProperty = fn?.Properties?.Role;
  const getAtt = isRecord(roleProperty) ? roleProperty['Fn::GetAtt'] : undefined;
  const role = isArray(getAtt) ? getAtt[0] : undefined;
  if (fn?.Type !== 'AWS::Lambda::Function' || typeof role !== 'string')
    throw new TemplatePolicyError(`${functionId} is not a function with a role of this template`);
  return role;
}

/**
 * The identity policies attached to the role `roleId`, resolved. A role with an AWS managed
 * policy ARN is refused: its contents are not in the template, so nothing could prove them.
 */
export function rolePolicies(template: Template, roleId: string, bindings: LocalBindings): { name: string; policy: PolicyDocument }[] {
  const role = template.Resources[roleId];
  if (role?.Type !== 'AWS::IAM::Role') throw new TemplatePolicyError(`${roleId} is not a role of this template`);
  if (Array.isArray(role.Properties?.ManagedPolicyArns) && role.Properties.ManagedPolicyArns.length > 0) {
    throw new TemplatePolicyError(`${roleId} carries managed policy ARNs the template does not contain`);
  }
  const names = (r: unknown) => JSON.stringify(r) === JSON.stringify({ Ref: roleId });
  return Object.entries(template.Resources)
    .filter(([, r]) => (r.Type === 'AWS::IAM::Policy' || r.Type === 'AWS::IAM::ManagedPolicy') && listHas(r.Properties?.Roles, names))
    .map(([id, r]) => ({ name: id, policy: policyDocument(resolveValue(r.Properties!.PolicyDocument, bindings), id) }));
}

/** The resource policy of a queue (its `AWS::SQS::QueuePolicy`), resolved; undefined when it has none. */
export function queuePolicy(template: Template, queueId: string, bindings: LocalBindings): PolicyDocument | undefined {
  const names = (q: unknown) => JSON.stringify(q) === JSON.stringify({ Ref: queueId });
  const found = Object.entries(template.Resources).find(([, r]) => r.Type === 'AWS::SQS::QueuePolicy' && listHas(r.Properties?.Queues, names));
  return found ? policyDocument(resolveValue(found[1].Properties!.PolicyDocument, bindings), found[0]) : undefined;
}
