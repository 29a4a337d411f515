#!/usr/bin/env bash
# The consumer test: fenceq as a team installs it. Packs the repo (`npm pack`, which builds),
# installs the tarball into empty projects with the npm registry only (the npm cache first), and:
#   - checks the install pulls no emulator or TypeScript loader;
#   - compiles a consumer of every entry point (strict; NodeNext and bundler resolution; no
#     skipLibCheck) with the worker example (examples/worker) and runs it against fenceq/testing;
#   - synthesizes the example's CDK app: fenceq's functions from the package's bundles, the
#     user's worker bundled from their entry;
#   - runs `npx fenceq --version`, `npx fenceq start` (first without the emulators: one line and a
#     non-zero exit; then the demo to its end; then --no-demo up, used, and down by SIGTERM to npx
#     with no process left);
#   - runs `npx fenceq work` with a .ts handlers file in a CommonJS project (first without a
#     loader: one line naming the fix; then with tsx) and stops it with SIGTERM to npx.
# Usage: bash test/package/consumer.sh   (CI: from .ci/run, after the build)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/test/package/consumer"
STARTED=$(date +%s)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fenceq-consumer.XXXXXX")
BG_PIDS=()
cleanup() {
  for p in "${BG_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  if [ -n "${FENCEQ_KEEP_CONSUMER:-}" ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true CDK_DISABLE_CLI_TELEMETRY=true
NPM_INSTALL=(npm install --prefer-offline --no-audit --no-fund --loglevel=error)
step() { printf '== consumer: %s\n' "$*"; }
fail() { printf 'consumer test FAILED: %s\n' "$*" >&2; exit 1; }
# The exact version this repo's lock file has of a package, so the install hits the npm cache.
locked() { node -e "const l=require('$ROOT/package-lock.json');const p=l.packages['node_modules/$1'];if(!p)process.exit(1);console.log(p.version)"; }
# Processes (other than this script) whose command line mentions the temp dir.
leftovers() { ps -eo pid,args | grep -F "$WORK" | grep -v -e grep -e "ps -eo" || true; }
# Waits (bounded) until a command succeeds.
wait_for() {
  local what=$1 deadline=$(( $(date +%s) + 60 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "timed out waiting for $what"
    sleep 0.2
  done
}
no_leftovers() { [ -z "$(leftovers)" ]; }

step "npm pack"
TARBALL=$(cd "$ROOT" && npm pack --pack-destination "$WORK" --silent | tail -1)
TARBALL="$WORK/$TARBALL"
VERSION=$(node -p "require('$ROOT/package.json').version")
[ -f "$TARBALL" ] || fail "npm pack made no tarball"

step "install into an empty ESM project (no emulators, no loader)"
APP="$WORK/app"
mkdir -p "$APP"
cd "$APP"
printf '{ "name": "consumer-app", "version": "1.0.0", "private": true, "type": "module" }\n' > package.json
"${NPM_INSTALL[@]}" "$TARBALL" "typescript@$(locked typescript)" "@types/node@$(locked @types/node)" \
  "aws-cdk-lib@$(locked aws-cdk-lib)" "constructs@$(locked constructs)" "esbuild@$(locked esbuild)"
for pkg in dynalite fauxqs tsx classic-level; do
  [ ! -e "node_modules/$pkg" ] || fail "installing fenceq pulled $pkg"
done

step "npx fenceq --version"
[ "$(npx --no-install fenceq --version)" = "$VERSION" ] || fail "fenceq --version is not $VERSION"

step "npx fenceq start --no-demo without the emulators: one line, non-zero exit, nothing left"
set +e
OUT=$(npx --no-install fenceq start --no-demo 2>&1)
CODE=$?
set -e
[ "$CODE" -ne 0 ] || fail "start without emulators exited 0"
[ "$(printf '%s\n' "$OUT" | wc -l)" -eq 1 ] || fail "start without emulators printed more than one line: $OUT"
printf '%s\n' "$OUT" | grep -q 'npm i -D dynalite fauxqs' || fail "start without emulators did not say what to install: $OUT"
no_leftovers || fail "start without emulators left processes: $(leftovers)"

step "npm i -D dynalite fauxqs"
"${NPM_INSTALL[@]}" -D "dynalite@$(locked dynalite)" "fauxqs@$(locked fauxqs)"

step "compile a consumer of every entry point (strict; NodeNext and bundler) with the worker example"
mkdir -p worker
cp "$ROOT"/examples/worker/*.ts worker/
cp "$HERE/consumer.ts" "$HERE/tsconfig.nodenext.json" "$HERE/tsconfig.bundler.json" .
npx --no-install tsc -p tsconfig.nodenext.json
npx --no-install tsc -p tsconfig.bundler.json

step "run it against fenceq/testing"
RESULT=$(FENCEQ_LOG=silent node build/consumer.js)
[ "$RESULT" = '{"ok":true,"result":{"sent":"ada@example.com","attempt":1}}' ] || fail "consumer printed $RESULT"
no_leftovers || fail "fenceq/testing left processes: $(leftovers)"

step "synthesize the example's CDK app (the construct with the user's own worker entry)"
CDK_OUTDIR="$APP/cdk.out" node build/worker/app.js
node -e "
const fs = require('fs');
const t = JSON.parse(fs.readFileSync('cdk.out/MyJobs.template.json', 'utf8'));
const fns = Object.values(t.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
if (fns.length !== 5) throw new Error('expected 5 functions (enqueue, api, admin, reclaim, worker), found ' + fns.length);
for (const f of fns) {
  const dir = 'cdk.out/asset.' + f.Properties.Code.S3Key.replace(/\.zip\$/, '');
  if (!fs.existsSync(dir + '/index.mjs')) throw new Error('no bundle in ' + dir);
}
// The user's worker is bundled from their entry (their handlers inside); fenceq's API is the package's bundle, byte for byte.
const worker = fns.find((f) => f.Properties.Description === 'fenceq Lambda worker');
const workerCode = fs.readFileSync('cdk.out/asset.' + worker.Properties.Code.S3Key.replace(/\.zip\$/, '') + '/index.mjs', 'utf8');
if (!workerCode.includes('payload.to must be an email address')) throw new Error('the worker bundle does not hold the user handlers');
const api = fns.find((f) => String(f.Properties.Description).startsWith('fenceq API'));
const apiCode = fs.readFileSync('cdk.out/asset.' + api.Properties.Code.S3Key.replace(/\.zip\$/, '') + '/index.mjs');
if (!apiCode.equals(fs.readFileSync('node_modules/fenceq/dist/lambda/api/index.mjs'))) throw new Error('the API function is not the pre-bundled one');
"

step "npx fenceq start: the demo from the package (its worker processes run the package's bin)"
npx --no-install fenceq start --jobs 10 --duration 2s --workers 2 > "$WORK/demo.out" 2>&1 || fail "the demo failed: $(tail -5 "$WORK/demo.out")"
grep -q 'Every job ended where it should' "$WORK/demo.out" || fail "the demo did not end well: $(tail -5 "$WORK/demo.out")"
wait_for "no process of the demo left" no_leftovers

step "npx fenceq start --no-demo: up, used, down by SIGTERM to npx"
npx --no-install fenceq --json start --no-demo > "$WORK/start.out" 2> "$WORK/start.err" &
START_PID=$!
BG_PIDS+=("$START_PID")
wait_for "stack.ready" grep -q '"event":"stack.ready"' "$WORK/start.out"
READY=$(grep '"event":"stack.ready"' "$WORK/start.out")
ENV_LINES=$(node -e "const r=JSON.parse(process.argv[1]);for(const [k,v] of Object.entries(r.env))console.log(k+'='+v)" "$READY")
EMULATOR_PIDS=$(node -e "console.log(Object.values(JSON.parse(process.argv[1]).pids).join(' '))" "$READY")
STACK_ENV=()
while IFS= read -r line; do STACK_ENV+=("$line"); done <<< "$ENV_LINES"
env "${STACK_ENV[@]}" npx --no-install fenceq --json stats > /dev/null || fail "fenceq stats against the local stack failed"

step "npx fenceq work with a .ts handlers file in a CommonJS project"
CJS="$WORK/cjs"
mkdir -p "$CJS"
cd "$CJS"
printf '{ "name": "consumer-cjs", "version": "1.0.0" }\n' > package.json # npm init -y: CommonJS
"${NPM_INSTALL[@]}" "$TARBALL"
cp "$HERE/cjs-handlers.ts" handlers.ts
if [ "$(node -p 'Boolean(process.features.typescript)')" = "false" ]; then
  set +e
  OUT=$(env "${STACK_ENV[@]}" npx --no-install fenceq work --handlers handlers.ts 2>&1)
  CODE=$?
  set -e
  [ "$CODE" -eq 2 ] || fail "work with a .ts file and no loader exited $CODE: $OUT"
  [ "$OUT" = 'fenceq: cannot load --handlers handlers.ts: a TypeScript handlers file needs a loader: run `npm i -D tsx` (or compile it to .js, or use Node.js 22.18 or later)' ] \
    || fail "work with a .ts file and no loader said: $OUT"
fi
"${NPM_INSTALL[@]}" -D "tsx@$(locked tsx)"
env "${STACK_ENV[@]}" FENCEQ_LOG=silent npx --no-install fenceq work --handlers handlers.ts --poll 100ms > "$WORK/work.out" 2>&1 &
WORK_PID=$!
BG_PIDS+=("$WORK_PID")
env "${STACK_ENV[@]}" npx --no-install fenceq enqueue shout '{"text":"hello"}' --id cjs-1 > /dev/null
job_field() { env "${STACK_ENV[@]}" npx --no-install fenceq --json get cjs-1 | node -e "let s='';process.stdin.on('data',(d)=>(s+=d)).on('end',()=>console.log(JSON.stringify(JSON.parse(s)[process.argv[1]])))" "$1"; }
is_done() { [ "$(job_field state)" = '"done"' ]; }
wait_for "the CommonJS project's .ts handler to finish its job" is_done
[ "$(job_field result)" = '{"shouted":"HELLO"}' ] || fail "the job's result is not the handler's: $(job_field result)"
kill -TERM "$WORK_PID"
wait "$WORK_PID" || true
worker_gone() { ! pgrep -f "fenceq work --handlers handlers.ts" > /dev/null; }
wait_for "the worker to exit" worker_gone

step "stop the local stack: SIGTERM to npx, no process left"
kill -TERM "$START_PID"
wait "$START_PID" || true
emulators_gone() { for p in $EMULATOR_PIDS; do kill -0 "$p" 2>/dev/null && return 1; done; return 0; }
wait_for "the emulators to exit" emulators_gone
wait_for "no process of the consumer projects left" no_leftovers

printf 'consumer test passed in %ss\n' "$(( $(date +%s) - STARTED ))"
