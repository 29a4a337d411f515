import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll } from 'vitest';

// Every test app of a file writes its cloud assembly under one folder, removed after the file.
let outRoot: string | undefined;
afterAll(() => {
  if (outRoot) rmSync(outRoot, { recursive: true, force: true });
  outRoot = undefined;
});

/** cdk.json's context (feature flags), so a test app synthesizes exactly what `npm run synth` does. */
export function cdkJsonContext(): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')).context;
}

/**
 * An app like infra/app.ts's, writing to a fresh temp dir (removed after the test file). `bundle: false` skips esbuild (the
 * CDK's own `aws:cdk:bundling-stacks` switch). CloudFormation schema validation is off by default:
 * it doubles the synth time and `npm run synth` (CI) validates the same template.
 */
export function testApp(opts: { bundle?: boolean; validate?: boolean; nag?: boolean; context?: Record<string, unknown> } = {}): App {
  const app = new App({
    outdir: mkdtempSync(join((outRoot ??= mkdtempSync(join(tmpdir(), 'fenceq-cdk-'))), 'app-')),
    builtinCloudFormationValidation: opts.validate ?? false,
    context: { ...cdkJsonContext(), ...(opts.bundle === false ? { 'aws:cdk:bundling-stacks': [] } : {}), ...opts.context },
  });
  if (opts.nag) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return app;
}

/** A violation as the validation report lists it. */
export interface ReportedViolation {
  readonly ruleName: string;
  readonly severity: string;
  readonly violatingConstructs: { readonly constructPath: string }[];
}

/** One plugin's section of the cloud assembly's validation-report.json. */
export interface PluginReport {
  readonly pluginName: string;
  readonly conclusion: string;
  readonly violations: ReportedViolation[];
  readonly suppressedViolations?: ReportedViolation[];
}

/** Synthesizes the app once; returns each stack's template and the validation report, or the error synthesis threw. */
export function synthOnce(app: App, stacks: Stack[]): { templates: Template[]; report: PluginReport[]; error: unknown } {
  let error: unknown;
  try {
    app.synth();
  } catch (err) {
    error = err;
  }
  const reportFile = join(app.outdir, 'validation-report.json');
  let report: PluginReport[] = [];
  try {
    report = JSON.parse(readFileSync(reportFile, 'utf8')).pluginReports;
  } catch {
    // No plugin ran (or synthesis failed before the report): an empty report.
  }
  return { templates: error ? [] : stacks.map((s) => Template.fromStack(s)), report, error };
}

/** A CloudFormation resource as the template holds it. */
export interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, any>;
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
}

/** The one resource of `type` whose logical id starts with `prefix`. */
export function only(template: Template, type: string, prefix: string): [string, CfnResource] {
  const hits = Object.entries(template.findResources(type) as Record<string, CfnResource>).filter(([id]) => id.startsWith(prefix));
  if (hits.length !== 1) throw new Error(`expected one ${type} with id ${prefix}*, found ${hits.map(([id]) => id).join(', ') || 'none'}`);
  return hits[0]!;
}

/** Every IAM statement attached (inline policies) to the role with logical id `roleId`, one entry per action and resource. */
export function grantsOfRole(template: Template, roleId: string): string[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy') as Record<string, CfnResource>).filter((p) =>
    (p.Properties.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: roleId })),
  );
  return policies.flatMap((p) => statementsToGrants(p.Properties.PolicyDocument.Statement));
}

/** Flattens statements to `Effect action -> resource` strings (resources rendered as their CloudFormation JSON). */
export function statementsToGrants(statements: any[]): string[] {
  return statements.flatMap((s) => {
    const actions = [s.Action].flat();
    const resources = [s.Resource].flat();
    return actions.flatMap((a: string) => resources.map((r: unknown) => `${s.Effect} ${a} -> ${render(r)}`));
  });
}

/** A readable form of a resource: `Arn(X)` for GetAtt X.Arn, `X/index/work` for the index join, `Ref(X)`. */
export function render(r: unknown): string {
  if (typeof r === 'string') return r;
  const o = r as Record<string, any>;
  if (o['Fn::GetAtt']) return `${o['Fn::GetAtt'][0]}.${o['Fn::GetAtt'][1]}`;
  if (o.Ref) return `Ref(${o.Ref})`;
  if (o['Fn::Join']) return (o['Fn::Join'][1] as unknown[]).map(render).join(o['Fn::Join'][0]);
  return JSON.stringify(r);
}

/** The logical id of an L2 construct's CloudFormation resource. */
export function logicalId(construct: IConstruct): string {
  return Stack.of(construct).getLogicalId(construct.node.defaultChild as CfnElement);
}
