/** Entry point of the `fenceq` command: bin/fenceq.js runs the built copy of this file (dist/src/cli/main.js). */
// Set before the SDK loads (hence the dynamic imports): the SDK's Node-version notice is noise on a CLI.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// A closed log pipe (EPIPE: the reader of our stdout or stderr went away) must not end the
// process mid-run or mid-shutdown: the output is dropped, the work (and a worker's lease
// release) goes on.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
if (process.env.npm_command !== undefined) {
  // Started by npm (`npx fenceq ...`, `npm exec`, an npm script): npm runs us under `sh -c`, and a
  // SIGTERM to npm kills that shell without reaching us. When our parent goes, act as if
  // signalled, so `work` releases its leases and `start` stops its stack instead of running on.
  const { watchParent } = await import('./parent-watch.js');
  watchParent(() => process.kill(process.pid, 'SIGTERM'));
}
const { processIo } = await import('./io.js');
const { runCli } = await import('./program.js');
process.exitCode = await runCli(process.argv.slice(2), processIo());
