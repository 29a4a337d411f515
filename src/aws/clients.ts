/** The SQS and Lambda client factories; each lives in its own module so a bundle takes only the client it uses. */
export { sqsClient } from './sqs-client.js';
export { lambdaClient } from './lambda-client.js';
