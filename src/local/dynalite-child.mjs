// Runs dynalite (the DynamoDB emulator) in its own process on a loopback port and prints
// {"port":N} once listening, or {"error":{"code","message"}} and exits 1 when it cannot listen
// (a --port already taken). It exits when its parent closes stdin, so it never outlives it.
import dynalite from 'dynalite';

const path = process.env.FENCEQ_DYNALITE_PATH || undefined;
const server = dynalite({ path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
const fail = (err) => {
  process.stdout.write(`${JSON.stringify({ error: { code: err.code ?? null, message: err.message } })}\n`, () => process.exit(1));
};
server.once('error', fail);
server.listen(Number(process.env.FENCEQ_DYNALITE_PORT || 0), '127.0.0.1', () => {
  server.off('error', fail);
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
