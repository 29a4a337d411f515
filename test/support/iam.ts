/**
 * The IAM-enforcing proxy for a test file: fenceq's stack synthesized once, its role policies
 * bound to the file's table and queues, and a proxy endpoint per principal. Functions under test
 * get their principal's endpoint as FENCEQ_DYNAMODB_ENDPOINT / FENCEQ_SQS_ENDPOINT, so every
 * request they send is authorized against the policy their role has in the template.
 * On by default; FENCEQ_TEST_IAM=off runs the same tests straight against the emulators.
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { afterAll } from 'vitest';
import { startIamProxy, type IamDecision, type IamProxy } from '../../src/local/iam-proxy.js';
import { bindIamTemplate, synthIamTemplate, type ExtraPrincipals, type IamTemplate, type LocalTargets } from '../../src/local/iam-template.js';

/** Whether this run enforces IAM in the function and e2e tests (FENCEQ_TEST_IAM=off turns it off). */
export const IAM_ENFORCED = process.env.FENCEQ_TEST_IAM !== 'off';

/** A test file's proxy. */
export interface IamHarness {
  /** The endpoints a principal's clients use (the emulators' own when IAM is off). */
  env(principal: string): { FENCEQ_DYNAMODB_ENDPOINT: string; FENCEQ_SQS_ENDPOINT: string };
  /** Binds other queues (a test's own dead-job queue, say) and decides afresh. */
  rebind(queueUrls: LocalTargets['queueUrls']): void;
  /** Every denial so far. */
  readonly denials: readonly IamDecision[];
  readonly proxy: IamProxy | undefined;
  readonly template: IamTemplate | undefined;
}

const proxies: IamProxy[] = [];
afterAll(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.stop()));
});

/**
 * Starts the proxy for `tableName` and the queues; `extra` adds principals granted through the
 * construct. `force` enforces even when FENCEQ_TEST_IAM=off (the IAM tests themselves).
 */
export async function iamHarness(
  local: LocalTargets,
  opts: { extra?: ExtraPrincipals; force?: boolean; onDecision?: (d: IamDecision) => void; lambdaEndpoint?: () => string | undefined } = {},
): Promise<IamHarness> {
  const raw = { FENCEQ_DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'), FENCEQ_SQS_ENDPOINT: inject('sqsEndpoint') };
  if (!IAM_ENFORCED && !opts.force) return { env: () => raw, rebind: () => undefined, denials: [], proxy: undefined, template: undefined };
  const template = await runIamTemplate(opts.extra);
  let targets = local;
  const bound = bindIamTemplate(template, targets);
  const proxy = await startIamProxy({
    dynamodbEndpoint: raw.FENCEQ_DYNAMODB_ENDPOINT,
    sqsEndpoint: raw.FENCEQ_SQS_ENDPOINT,
    ...bound,
    onDecision: opts.onDecision,
    lambdaEndpoint: opts.lambdaEndpoint,
  });
  proxies.push(proxy);
  return {
    env: (principal) => {
      const url = proxy.endpoint(principal);
      return { FENCEQ_DYNAMODB_ENDPOINT: url, FENCEQ_SQS_ENDPOINT: url };
    },
    rebind(queueUrls) {
      targets = { ...targets, queueUrls: { ...targets.queueUrls, ...queueUrls } };
      const next = bindIamTemplate(template, targets);
      proxy.update(next.principals, next.resourcePolicies);
    },
    get denials() {
      return proxy.denials;
    },
    proxy,
    template,
  };
}

/**
 * The stack synthesized once per run for each set of extra principals (keyed by the source of
 * `extra`): the first file to ask synthesizes it (seconds of CDK) and keeps it as JSON in the run's
 * folder (test/support/global-setup.ts); every later file of the run reads it.
 */
async function runIamTemplate(extra: ExtraPrincipals | undefined): Promise<IamTemplate> {
  const key = createHash('sha256')
    .update(String(extra ?? ''))
    .digest('hex')
    .slice(0, 16);
  const file = join(inject('runDir'), `iam-template-${key}.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as IamTemplate;
  } catch {
    // Not synthesized in this run yet.
  }
  const template = await synthIamTemplate(extra);
  const part = `${file}.${String(process.pid)}`;
  writeFileSync(part, JSON.stringify(template));
  renameSync(part, file); // whole or not at all, for a file reading it at the same time
  return template;
}
