/**
 * The IAM side of the local stack: fenceq's own stack (FenceqStack) synthesized in this process,
 * and its role policies bound to the local table, queues and functions for the IAM-enforcing
 * proxy. The policies are the template's, never a list kept by hand: change infra/access.ts and
 * the proxy enforces the change.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FencedJobQueue } from '../../infra/fenced-job-queue.js';
import { FenceqError } from '../errors.js';
import { isRecord } from '../type-guards.js';
import { requirePackages } from './optional-packages.js';
import type { ProxyPrincipal } from './iam-proxy.js';
import {
  bindFunction,
  bindQueue,
  bindTable,
  queuePolicy,
  readTemplate,
  rolePolicies,
  roleOfFunction,
  type LocalBindings,
  type PolicyDocument,
} from './template-policies.js';

/** fenceq's functions, by the principal name the proxy knows their role under. */
export const FUNCTION_PRINCIPALS = ['enqueue', 'api', 'admin', 'reclaim', 'worker'] as const;

/** A function principal. */
type FunctionPrincipal = (typeof FUNCTION_PRINCIPALS)[number];

/** A construct of the synthesized stack that has no logical id (not a CloudFormation element, nor one's owner). */
class IamTemplateError extends FenceqError {
  override name = 'IamTemplateError';
}

/** The synthesized template and the logical ids the proxy binds. */
export interface IamTemplate {
  readonly template: { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> };
  /** Logical ids of the table and the four queues. */
  readonly ids: { readonly table: string; readonly wake: string; readonly wakeRedrive: string; readonly dead: string; readonly deadRedrive: string };
  /** Logical ids of the functions. */
  readonly functions: Readonly<Record<FunctionPrincipal, string>>;
  /** Role logical id of each principal: the functions' roles, and every extra principal's. */
  readonly roles: Readonly<Record<string, string>>;
}

/** A construct (the CDK's type, named through FencedJobQueue so these declarations need no CDK import). */
type Scope = ConstructorParameters<typeof FencedJobQueue>[0];

/** Extra principals to grant in the synthesized stack: name -> a role granted through the queue's methods. */
export type ExtraPrincipals = (queue: FencedJobQueue, scope: Scope) => Record<string, Scope>;

/**
 * Synthesizes FenceqStack (as `npm run synth` does, with cdk.json's context, without schema
 * validation) and returns its template with the ids to bind. `extra` adds roles granted through
 * the construct's grant methods, each becoming a principal of its name.
 */
export async function synthIamTemplate(extra?: ExtraPrincipals): Promise<IamTemplate> {
  requirePackages('the IAM-enforcing proxy (--enforce-iam)', ['aws-cdk-lib', 'constructs']);
  // The stack module by a computed specifier: the CLI's module graph (test/package) keeps the CDK
  // out of every path but this one, which loads it on demand.
  const stackModule = '../../infra/fenceq-stack.js';
  // Cast: import() of a computed specifier is `any`; this names the module it loads.
  const [{ App, CfnElement }, { FenceqStack }] = await Promise.all([
    import('aws-cdk-lib'),
    import(stackModule) as Promise<typeof import('../../infra/fenceq-stack.js')>,
  ]);
  const outdir = mkdtempSync(join(tmpdir(), 'fenceq-iam-'));
  try {
    const app = new App({ outdir, context: cdkContext() });
    const stack = new FenceqStack(app, 'Fenceq');
    const q = stack.queue;
    const extras = extra?.(q, stack) ?? {};
    const template = readTemplate(app.synth().getStackByName(stack.stackName).template);
    const id = (c: Scope) => {
      const element = c.node.defaultChild ?? c;
      if (!CfnElement.isCfnElement(element)) throw new IamTemplateError(`${c.node.path} is not a CloudFormation element and has no logical id`);
      return stack.getLogicalId(element);
    };
    const functions: Record<FunctionPrincipal, string> = {
      enqueue: id(q.enqueueFunction),
      api: id(q.apiFunction),
      admin: id(q.adminFunction),
      reclaim: id(q.reclaimFunction),
      worker: id(q.workerFunction),
    };
    const roles = {
      ...Object.fromEntries(Object.entries(functions).map(([k, f]) => [k, roleOfFunction(template, f)])),
      ...Object.fromEntries(Object.entries(extras).map(([k, c]) => [k, id(c)])),
    };
    return {
      template,
      ids: {
        table: id(q.table),
        wake: id(q.queues.wake),
        wakeRedrive: id(q.queues.wakeRedrive),
        dead: id(q.queues.dead),
        deadRedrive: id(q.queues.deadRedrive),
      },
      functions,
      roles,
    };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** The local resources the template's ids stand for. */
export interface LocalTargets {
  readonly tableName: string;
  readonly queueUrls: { readonly wake?: string; readonly wakeRedrive?: string; readonly dead?: string; readonly deadRedrive?: string };
  /** Local names of the functions (for lambda:InvokeFunction grants). */
  readonly functionNames?: Partial<Record<FunctionPrincipal, string>>;
}

/** Binds the template to the local resources: every principal's resolved policies, and the queues' resource policies by ARN. */
export function bindIamTemplate(
  t: IamTemplate,
  local: LocalTargets,
): { principals: Record<string, ProxyPrincipal>; resourcePolicies: Record<string, PolicyDocument> } {
  const bindings: Record<string, ReturnType<typeof bindTable>> = { [t.ids.table]: bindTable(local.tableName) };
  for (const q of ['wake', 'wakeRedrive', 'dead', 'deadRedrive'] as const) {
    const url = local.queueUrls[q];
    if (url) bindings[t.ids[q]] = bindQueue(url);
  }
  for (const fn of FUNCTION_PRINCIPALS) {
    const name = local.functionNames?.[fn];
    if (name !== undefined) bindings[t.functions[fn]] = bindFunction(name);
  }
  const b: LocalBindings = bindings;
  const principals = Object.fromEntries(Object.entries(t.roles).map(([name, role]) => [name, { policies: rolePolicies(t.template, role, b) }]));
  const resourcePolicies: Record<string, PolicyDocument> = {};
  for (const q of ['wake', 'wakeRedrive', 'dead', 'deadRedrive'] as const) {
    const policy = local.queueUrls[q] ? queuePolicy(t.template, t.ids[q], b) : undefined;
    if (policy) resourcePolicies[bindings[t.ids[q]]!.attributes.Arn!] = policy;
  }
  return { principals, resourcePolicies };
}

/** cdk.json's context (feature flags) when fenceq's own cdk.json is there; none otherwise. */
function cdkContext(): Record<string, unknown> {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dirname(dir) !== dir; dir = dirname(dir)) {
    const file = join(dir, 'cdk.json');
    if (existsSync(file) && existsSync(join(dir, 'bin', 'fenceq.js'))) {
      const cdkJson: unknown = JSON.parse(readFileSync(file, 'utf8'));
      return isRecord(cdkJson) && isRecord(cdkJson.context) ? cdkJson.context : {};
    }
  }
  return {};
}
