#!/usr/bin/env bash
# Offline vulnerability scan. govulncheck cannot reach its online database
# here, but the database's source (golang.org/x/vulndb) is served as a Go
# module: this script builds the v1 JSON database from it once (cached under
# $RW_VULNDB_CACHE), installs govulncheck once (under $RW_VULNCHECK_BIN) and
# runs it against that database. Only those two first runs need GOPROXY;
# after them the scan runs offline. It fails on any finding that is
# reachable from our code and has a fixed version, except the IDs in the
# reviewed allow-list below, and it fails loudly, with the reason, when it
# cannot run at all.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=go1.27.3
VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018
GOVULNCHECK_VERSION=v1.9.0
root="${XDG_CACHE_HOME:-$HOME/.cache}/restorewatch"
cache="${RW_VULNDB_CACHE:-$root/vulndb-$VULNDB_VERSION}"
bindir="${RW_VULNCHECK_BIN:-$root/govulncheck-$GOVULNCHECK_VERSION}"

# Reviewed findings: ID and why it is accepted.
declare -A allow=(
  # echo v4: rate-limiter bypass through a spoofed X-Forwarded-For via
  # Context.RealIP. web sets IPExtractor to echo.ExtractIPDirect() (no proxy
  # is trusted) and keys its limiter on that, so RealIP never reads the header.
  [GO-2026-6872]="echo v4 RealIP/X-Forwarded-For: IPExtractor is ExtractIPDirect; no fixed v4 release"
  # echo v4: the proxy middleware forwards X-Real-IP. restorewatch uses no
  # proxy middleware.
  [GO-2026-6875]="echo v4 proxy middleware X-Real-IP: proxy middleware not used; no fixed v4 release"
)

fail() {
  printf 'vulncheck: FAILED: %s\n' "$1" >&2
  shift
  for line in "$@"; do printf '  %s\n' "$line" >&2; done
  exit 1
}

# needs_network explains what a first run downloads and how to run offline.
needs_network() {
  fail "cannot download $1" "$2" \
    "GOPROXY=$(go env GOPROXY) GOFLAGS=$(go env GOFLAGS) GONOSUMDB=$(go env GONOSUMDB) GOSUMDB=$(go env GOSUMDB)" \
    "The first run needs the module proxy once: it downloads golang.org/x/vulndb@$VULNDB_VERSION (the database's" \
    "source) and golang.org/x/vuln@$GOVULNCHECK_VERSION (govulncheck) with their dependencies, builds the database into" \
    "$cache and installs govulncheck into $bindir. After that it runs offline." \
    "To scan on a machine without the proxy, run this script once where it is reachable and copy both directories" \
    "(or point RW_VULNDB_CACHE and RW_VULNCHECK_BIN at copies of them)."
}

for tool in go git python3; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed" "the scan needs go, git (to build the database) and python3 (to read govulncheck's JSON)"
done

if [ ! -f "$cache/db/index/db.json" ]; then
  echo "building the vulnerability database from golang.org/x/vulndb@$VULNDB_VERSION (about a minute, once)"
  if ! json=$(go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" 2>&1); then
    reason=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p')
    needs_network "golang.org/x/vulndb@$VULNDB_VERSION" "${reason:-$json}"
  fi
  src=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  [ -n "$src" ] && [ -d "$src" ] || fail "go mod download gave no directory for golang.org/x/vulndb@$VULNDB_VERSION" "$json"
  rm -rf "$cache" && mkdir -p "$cache"
  cp -r "$src" "$cache/repo" && chmod -R u+w "$cache/repo"
  (cd "$cache/repo" && git init -q && git add -A && git -c user.email=ci@localhost -c user.name=ci commit -qm vulndb) ||
    fail "git could not snapshot the database source in $cache/repo"
  # Built beside and renamed into place, so an interrupted build is redone.
  if ! log=$(cd "$cache/repo" && go run ./cmd/gendb -repo "$cache/repo" -out "$cache/db.tmp" 2>&1); then
    if printf '%s' "$log" | grep -q -e 'module lookup disabled' -e 'dial tcp' -e 'no such host' -e 'proxy'; then
      needs_network "the dependencies of golang.org/x/vulndb's gendb" "$(printf '%s\n' "$log" | tail -5)"
    fi
    fail "building the database failed (go run ./cmd/gendb in $cache/repo)" "$(printf '%s\n' "$log" | tail -20)"
  fi
  mv "$cache/db.tmp" "$cache/db"
fi

if [ ! -x "$bindir/govulncheck" ]; then
  echo "installing govulncheck $GOVULNCHECK_VERSION into $bindir (once)"
  mkdir -p "$bindir"
  if ! log=$(GOBIN="$bindir" go install "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION" 2>&1); then
    needs_network "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION" "$(printf '%s\n' "$log" | tail -5)"
  fi
fi

out=$(mktemp)
errs=$(mktemp)
trap 'rm -f "$out" "$errs"' EXIT
set +e
"$bindir/govulncheck" -db "file://$cache/db" -format json ./... >"$out" 2>"$errs"
rc=$?
set -e
if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
  fail "govulncheck could not run (exit $rc)" "$(tail -20 "$errs")" "$(tail -5 "$out")"
fi
# Reachable findings are those with a call stack into the vulnerable symbol.
python3 - "$out" "${!allow[@]}" <<'PY'
import json, sys
path, allowed = sys.argv[1], set(sys.argv[2:])
text = open(path).read()
dec, i, objs = json.JSONDecoder(), 0, []
while i < len(text):
    while i < len(text) and text[i].isspace(): i += 1
    if i >= len(text): break
    o, i = dec.raw_decode(text, i); objs.append(o)
if not any("config" in o for o in objs):
    print("vulncheck: FAILED: govulncheck wrote no report", file=sys.stderr); sys.exit(1)
osv = {o["osv"]["id"]: o["osv"] for o in objs if "osv" in o}
bad, reviewed = {}, set()
for o in objs:
    f = o.get("finding")
    if not f: continue
    trace = f.get("trace", [])
    if not trace or "function" not in trace[0]: continue   # not reachable from our code
    vid, fixed = f["osv"], f.get("fixed_version", "")
    if vid in allowed: reviewed.add(vid); continue
    if fixed: bad.setdefault(vid, (fixed, trace[0].get("module",""), osv.get(vid, {}).get("summary","")))
for vid in sorted(reviewed): print(f"reviewed and accepted: {vid}")
for vid, (fixed, mod, summary) in sorted(bad.items()):
    print(f"VULNERABLE: {vid} in {mod}, fixed in {fixed}: {summary}")
sys.exit(1 if bad else 0)
PY
echo "vulnerability scan: no reachable, fixable finding outside the reviewed list"
