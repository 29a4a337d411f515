// Runs fauxqs (an SQS emulator speaking the JSON protocol of @aws-sdk/client-sqs) in its own
// process on a loopback port and prints {"port":N} once listening, or {"error":{"code","message"}}
// and exits 1 when it cannot listen. Queue URLs it hands out are
// http://127.0.0.1:N/000000000000/<name>. It exits when its parent closes stdin, so it never
// outlives it.
import { buildApp } from 'fauxqs';

const app = buildApp({ logger: false });
const port = Number(process.env.FENCEQ_FAUXQS_PORT || 0);
app.listen({ port, host: '127.0.0.1' }).then(
  () => process.stdout.write(`${JSON.stringify({ port: app.server.address().port })}\n`),
  (err) => process.stdout.write(`${JSON.stringify({ error: { code: err.code ?? null, message: err.message } })}\n`, () => process.exit(1)),
);
const stop = () => app.close().then(() => process.exit(0));
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
