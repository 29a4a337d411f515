/** fenceq's CDK app (cdk.json runs it): one FenceqStack, configured from context (see infra/context.ts). */
import { App } from 'aws-cdk-lib';
import { stackPropsFromContext } from './context.js';
import { FenceqStack } from './fenceq-stack.js';

const app = new App();
const { stackName, props } = stackPropsFromContext(app.node);
// No `env`: the template is account- and region-agnostic, so synth needs no credentials;
// `cdk deploy` targets the account and region of the credentials it runs with.
new FenceqStack(app, stackName, props);
app.synth();
