#!/usr/bin/env bash
# Builds restorewatch's release archives: linux, windows and darwin on amd64
# and arm64 (RW_RELEASE_TARGETS="linux/amd64 windows/amd64" for fewer), each
# with the README, the systemd unit, the Dockerfile and permissions.sql,
# and SHA256SUMS over them. `restorewatch version` in every binary names
# the version (the first argument, else git describe) and the commit.
#
#   bash bench/release.sh [VERSION]      # into dist/VERSION (RW_RELEASE_DIR)
#   cd dist/VERSION && sha256sum -c SHA256SUMS
#
# Builds are reproducible: -trimpath, CGO off (modernc SQLite is pure Go),
# archive entries owned by root with the commit's time.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=go1.27.3 CGO_ENABLED=0
version="${1:-$(git describe --tags --always --dirty)}"
commit=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "release: the tree has uncommitted changes; the binaries will say +modified" >&2
fi
stamp=$(git log -1 --format=%ct)
out="${RW_RELEASE_DIR:-dist}/$version"
targets="${RW_RELEASE_TARGETS:-linux/amd64 linux/arm64 windows/amd64 windows/arm64 darwin/amd64 darwin/arm64}"
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for target in $targets; do
  goos=${target%/*}
  goarch=${target#*/}
  name="restorewatch-$version-$goos-$goarch"
  exe=restorewatch
  [ "$goos" = windows ] && exe=restorewatch.exe
  mkdir -p "$stage/$name"
  echo "-- $name"
  # -buildvcs=true overrides a GOFLAGS=-buildvcs=false: the binary's
  # build info carries vcs.revision, which `restorewatch version` prints.
  GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=true \
    -ldflags "-s -w -X main.Version=$version -X main.Commit=$commit" \
    -o "$stage/$name/$exe" ./cmd/restorewatch
  cp README.md docs/deploy/restorewatch.service docs/deploy/Dockerfile ingest/mssql/permissions.sql "$stage/$name/"
  find "$stage/$name" -exec touch -d "@$stamp" {} +
  if [ "$goos" = windows ]; then
    (cd "$stage" && TZ=UTC zip -qrX "$out/$name.zip" "$name")
  else
    tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$stamp" -cf - "$name" | gzip -n >"$out/$name.tar.gz"
  fi
  if [ "$goos" = "$(go env GOHOSTOS)" ] && [ "$goarch" = "$(go env GOHOSTARCH)" ]; then
    v=$("$stage/$name/$exe" version)
    echo "   $v"
    case "$v" in *"commit ${commit:0:12}"*) ;; *) echo "release: $name's version does not name commit $commit: $v" >&2; exit 1 ;; esac
  fi
done
(cd "$out" && sha256sum -- *.tar.gz *.zip 2>/dev/null >SHA256SUMS || sha256sum -- *.tar.gz >SHA256SUMS)
echo "wrote $out:"
cat "$out/SHA256SUMS"
