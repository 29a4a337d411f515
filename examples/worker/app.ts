/**
 * Your CDK app: a stack with fenceq in it, running your worker. `npx cdk deploy` (with
 * `"app": "npx tsx app.ts"` in cdk.json), or compile it and run `node app.js` to synthesize.
 */
import { fileURLToPath } from 'node:url';
import { App, CfnOutput, Stack } from 'aws-cdk-lib';
import { FencedJobQueue } from 'fenceq/cdk';
import { handlers } from './handlers.js';

const app = new App();
const stack = new Stack(app, 'MyJobs');
const jobs = new FencedJobQueue(stack, 'Jobs', {
  // The .ts source (bundled by your project's esbuild at synth); lambda.js when run compiled.
  workerEntry: fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './lambda.ts' : './lambda.js', import.meta.url)),
  workerQueues: Object.keys(handlers),
});
new CfnOutput(stack, 'TableName', { value: jobs.table.tableName });
new CfnOutput(stack, 'ApiFunctionName', { value: jobs.apiFunction.functionName });
app.synth();
