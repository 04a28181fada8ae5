#!/usr/bin/env bash
# Offline vulnerability scan. govulncheck cannot reach its online database
# here, but the database's source (golang.org/x/vulndb) is served as a Go
# module: this script builds the v1 JSON database from it once (cached under
# $RW_VULNDB_CACHE) and runs govulncheck against it. It fails on any finding
# that is reachable from our code and has a fixed version, except the IDs in
# the reviewed allow-list below.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=go1.27.3
VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018
GOVULNCHECK_VERSION=v1.9.0
cache="${RW_VULNDB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/restorewatch/vulndb-$VULNDB_VERSION}"

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

if [ ! -f "$cache/db/index/db.json" ]; then
  echo "building the vulnerability database from golang.org/x/vulndb@$VULNDB_VERSION (about a minute, once)"
  src=$(go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  rm -rf "$cache" && mkdir -p "$cache"
  cp -r "$src" "$cache/repo" && chmod -R u+w "$cache/repo"
  (cd "$cache/repo" && git init -q && git add -A && git -c user.email=ci@localhost -c user.name=ci commit -qm vulndb)
  (cd "$cache/repo" && go run ./cmd/gendb -repo "$cache/repo" -out "$cache/db")
fi

out=$(mktemp)
set +e
go run "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION" -db "file://$cache/db" -format json ./... >"$out"
rc=$?
set -e
if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
  echo "govulncheck failed to run (exit $rc)"; tail -20 "$out"; exit 1
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
