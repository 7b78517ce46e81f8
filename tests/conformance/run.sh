#!/usr/bin/env bash
# Runs the official MCP conformance suite (client side, auth/* included) against mcpmini.
#
#   bash tests/conformance/run.sh [scenario ...]     # no argument: every client scenario of each line
#   bash tests/conformance/run.sh --bridge [scenario ...]        # the client reaches each server
#   bash tests/conformance/run.sh --bridge-cross [scenario ...]  # through `mcpmini bridge URL`
#
# --bridge: the client speaks the scenario's era to the bridge; --bridge-cross: the other era, so
# the bridge translates (see conformance_client.py). The auth/* scenarios are skipped there: a
# bridge runs no browser login of its own (its user runs `mcpmini login` first).
#
# Environment: PYTHON (default python3) runs the client; MCPMINI_PEERS_DIR (default
# ~/.cache/mcpmini-peers) caches Node 22 and the pinned suites, installed from npm on first use;
# MCPMINI_CONFORMANCE_OUT keeps the logs (default: a new temp dir).
# One line per scenario: `PASS|FAIL|WARN <version> <scenario> (<passed>/<total> checks)`, the logs of
# anything not PASS, then `N passed, N failed`. Exits non-zero on any failure or warning.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${MCPMINI_PEERS_DIR:-$HOME/.cache/mcpmini-peers}
PYTHON=${PYTHON:-python3}
OUT=${MCPMINI_CONFORMANCE_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/mcpmini-conformance.XXXXXX")}
CLIENT_CMD="$PYTHON tests/conformance/conformance_client.py"  # the suite splits it on single spaces
NODE_VERSION=22.23.3     # same pin as tests/interop/interop_peers.py
SUITE_NEW=0.2.0-alpha.12   # has the 2026-07-28 client scenarios
SUITE_OLD=0.1.16           # cross-check of the 2025-11-25 line
EXPECTED_NEW_2025="initialize tools_call elicitation-sep1034-client-defaults sse-retry json-schema-2020-12-preservation"
EXPECTED_NEW_2026="tools_call request-metadata sep-2322-client-request-state http-standard-headers http-custom-headers http-invalid-tool-headers json-schema-ref-no-deref json-schema-2020-12-preservation"
EXPECTED_OLD_2025="initialize tools_call elicitation-sep1034-client-defaults sse-retry"
AUTH_2025="auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3 auth/basic-cimd
 auth/scope-from-www-authenticate auth/scope-from-scopes-supported auth/scope-omitted-when-undefined
 auth/scope-step-up auth/scope-retry-limit auth/token-endpoint-auth-basic auth/token-endpoint-auth-post
 auth/token-endpoint-auth-none auth/pre-registration"
AUTH_2026="$AUTH_2025 auth/resource-mismatch auth/offline-access-scope auth/offline-access-not-supported
 auth/authorization-server-migration auth/iss-supported auth/iss-not-advertised auth/iss-supported-missing
 auth/iss-wrong-issuer auth/iss-unexpected auth/iss-normalized auth/metadata-issuer-mismatch"
EXPECTED_NEW_2025="$EXPECTED_NEW_2025 $AUTH_2025"
EXPECTED_NEW_2026="$EXPECTED_NEW_2026 $AUTH_2026"
EXPECTED_OLD_2025="$EXPECTED_OLD_2025 $AUTH_2025"
# Extension scenarios (not scored, listed by no spec version) that are run on the 2026 line:
EXTENSIONS_RUN="auth/client-credentials-basic"
# Extension scenarios (not scored, listed by no spec version) that are not run:
SKIPPED_EXTENSIONS="auth/dpop:needs-ES256-signing-(not-in-the-stdlib)
auth/dpop-nonce:needs-ES256-signing-(not-in-the-stdlib)
auth/client-credentials-jwt:needs-ES256-signing-(not-in-the-stdlib)
auth/wif-jwt-bearer:jwt-bearer-grant-not-implemented-yet
auth/enterprise-managed-authorization:token-exchange-not-implemented-yet"
BRIDGE=
case ${1:-} in
    --bridge) BRIDGE=same; shift ;;
    --bridge-cross) BRIDGE=cross; shift ;;
esac
export MCPMINI_CONFORMANCE_BRIDGE=$BRIDGE
ONLY=" $* "
START=$SECONDS
passed=0
failed=0
failing_logs=()

# One `npm install --prefix` per pinned package, shared with tests/interop/interop_peers.py:
# <cache>/npm/<name without '@', '/' as '-'>@<version>, complete once its `.mcpmini-installed`
# marker lists the specs; <cache>/locks/npm-<name>.lock serialises concurrent installs.
npm_prefix() {  # <package> <version> -> prefix dir, installed if missing
    local name spec prefix
    name="$(sed 's/^@//; s#/#-#g' <<<"$1")@$2"
    spec="$1@$2"
    prefix=$CACHE/npm/$name
    if [ "$(cat "$prefix/.mcpmini-installed" 2>/dev/null)" != "$spec" ]; then
        mkdir -p "$CACHE/locks" "$prefix"
        (
            flock 9
            if [ "$(cat "$prefix/.mcpmini-installed" 2>/dev/null)" != "$spec" ]; then
                echo "installing $spec into $prefix" >&2
                npm install --prefix "$prefix" --no-audit --no-fund --save-exact --loglevel=error \
                    "$spec" >&2
                printf '%s\n' "$spec" >"$prefix/.mcpmini-installed.$$"
                mv "$prefix/.mcpmini-installed.$$" "$prefix/.mcpmini-installed"
            fi
        ) 9>"$CACHE/locks/npm-$name.lock"
    fi
    echo "$prefix"
}

# The machine's Node 20 crashes conformance >= 0.1.14 (fs.globSync); the npm package `node` ships
# a Node 22 binary (installed by its preinstall script, so never use --ignore-scripts).
NODE=$(npm_prefix node "$NODE_VERSION")/node_modules/node/bin/node
if ! "$NODE" --version | grep -q '^v22\.'; then
    echo "$NODE is not Node 22: delete its folder and rerun" >&2
    exit 1
fi
CLI_NEW=$(npm_prefix @modelcontextprotocol/conformance "$SUITE_NEW")/node_modules/@modelcontextprotocol/conformance/dist/index.js
CLI_OLD=$(npm_prefix @modelcontextprotocol/conformance "$SUITE_OLD")/node_modules/@modelcontextprotocol/conformance/dist/index.js

listed() {  # <cli> <spec version> -> client scenarios (auth/* included), as the suite lists them
    "$NODE" "$1" list --client --spec-version "$2" | awk '/^  - /{print $2}' || true
}

summarize() {  # <checks.json> -> "passed total failures warnings", problem checks to stderr
    python3 - "$1" <<'EOF'
import json, sys
checks = json.load(open(sys.argv[1]))
count = {s: sum(c.get("status") == s for c in checks) for s in ("SUCCESS", "FAILURE", "WARNING")}
print(count["SUCCESS"], count["SUCCESS"] + count["FAILURE"], count["FAILURE"], count["WARNING"])
for c in checks:
    if c.get("status") in ("FAILURE", "WARNING"):
        why = c.get("errorMessage") or (c.get("details") or {}).get("message", "")
        print(f"  {c['status']} {c.get('id')} {c.get('name')}: {why}", file=sys.stderr)
EOF
}

run_one() {  # <cli> <label> <spec version, empty for an extension> <scenario>
    local cli=$1 label=$2 version=$3 scenario=$4
    if [ -n "$BRIDGE" ] && [[ "$scenario" == auth/* ]]; then
        echo "SKIP $label $scenario: the bridge runs no browser login of its own"
        return
    fi
    local dir="$OUT/$label/${scenario//\//_}"
    mkdir -p "$dir"
    local rc=0
    (cd "$ROOT" && timeout 120 "$NODE" "$cli" client --command "$CLIENT_CMD" --scenario "$scenario" \
        ${version:+--spec-version "$version"} -o "$dir") >"$dir/suite.log" 2>&1 || rc=$?
    local checks stats status
    checks=$(find "$dir" -name checks.json -print -quit)
    if [ -n "$checks" ]; then
        stats=$(summarize "$checks" 2>"$dir/problems.txt")
    else
        stats="0 0 1 0"
        echo "  no checks.json: the suite itself failed (exit $rc)" >"$dir/problems.txt"
    fi
    read -r ok total bad warn <<<"$stats"
    if [ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] && [ "$warn" -eq 0 ]; then
        status=PASS
    elif [ "$bad" -eq 0 ] && [ "$warn" -gt 0 ] && ! grep -q 'CLIENT EXITED WITH ERROR\|CLIENT TIMED OUT' "$dir/suite.log"; then
        status=WARN
    else
        status=FAIL
    fi
    echo "$status $label $scenario ($ok/$total checks)"
    if [ "$status" = PASS ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failing_logs+=("$dir")
    fi
}

run_line() {  # <cli> <label> <spec version> <expected scenarios>
    local cli=$1 label=$2 version=$3 expected=$4 scenarios s
    scenarios=$(listed "$cli" "$version")
    for s in $expected; do
        if ! grep -qx -- "$s" <<<"$scenarios"; then
            echo "FAIL $label $s (0/0 checks): expected scenario not listed by the suite"
            failed=$((failed + 1))
        fi
    done
    for s in $scenarios; do
        if [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $s "* ]]; then
            run_one "$cli" "$label" "$version" "$s"
        fi
    done
}

echo "conformance logs: $OUT${BRIDGE:+ (through mcpmini bridge, $BRIDGE era)}"
for entry in $SKIPPED_EXTENSIONS; do
    s=${entry%%:*}
    if [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $s "* ]]; then
        echo "SKIP extension $s: ${entry#*:}" | tr '-' ' ' | sed "s|$(tr '-' ' ' <<<"$s")|$s|"
    fi
done
run_line "$CLI_NEW" 2025-11-25 2025-11-25 "$EXPECTED_NEW_2025"
run_line "$CLI_NEW" 2026-07-28 2026-07-28 "$EXPECTED_NEW_2026"
for s in $EXTENSIONS_RUN; do
    if [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $s "* ]]; then
        run_one "$CLI_NEW" extension "" "$s"
    fi
done
run_line "$CLI_OLD" 2025-11-25@$SUITE_OLD 2025-11-25 "$EXPECTED_OLD_2025"

for dir in ${failing_logs[@]+"${failing_logs[@]}"}; do
    echo
    echo "==== ${dir#"$OUT"/}: problem checks"
    cat "$dir/problems.txt"
    echo "==== ${dir#"$OUT"/}: suite output"
    cat "$dir/suite.log"
    # The suite prints the client's stderr only when it exited non-zero.
    if ! grep -q 'CLIENT EXITED WITH ERROR' "$dir/suite.log"; then
        stderr_file=$(find "$dir" -name stderr.txt -print -quit)
        if [ -n "$stderr_file" ]; then
            echo "==== ${dir#"$OUT"/}: client stderr"
            cat "$stderr_file"
        fi
    fi
done
echo
echo "conformance run took $((SECONDS - START)) s; logs in $OUT"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
