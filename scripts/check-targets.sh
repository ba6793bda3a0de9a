#!/usr/bin/env bash
# `cargo check --lib --target <t>` for every configured target other than the
# host (docs/guide/platforms-and-packaging.md, platform table): type-checks the Rust code, cfg
# gates included (src/platform/), for targets whose C toolchain is not here.
# aws-lc-sys's build script compiles C; where no C compiler for the target
# exists, a no-op stand-in (created in a temp dir) "compiles" it, so only the
# Rust code is checked. Needs `rustup target add <t>` for each target.
#
#   scripts/check-targets.sh [target…]
set -uo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-gnu aarch64-unknown-linux-musl x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-msvc aarch64-pc-windows-msvc)
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
cat > "$fake/cc" <<'SH'
#!/bin/sh
out=""; prev=""
for a in "$@"; do
  [ "$prev" = "-o" ] && out="$a"
  case "$a" in -o?*) out="${a#-o}";; esac
  prev="$a"
done
[ -n "$out" ] && : > "$out"
exit 0
SH
cat > "$fake/ar" <<'SH'
#!/bin/sh
for a in "$@"; do case "$a" in -out:*|/OUT:*|-OUT:*) printf '!<arch>\n' > "${a#*:}"; exit 0;; *.a|*.lib) printf '!<arch>\n' > "$a"; exit 0;; esac; done
exit 0
SH
chmod +x "$fake/cc" "$fake/ar"
ln -s cc "$fake/nasm"
status=0
for t in "${targets[@]}"; do
  u=${t//-/_}
  if cargo check --locked --lib --target "$t" >/dev/null 2>&1; then
    echo "$t: ok (the target's own C toolchain)"
  elif env PATH="$fake:$PATH" "CC_$u=$fake/cc" "CXX_$u=$fake/cc" "AR_$u=$fake/ar" cargo check --locked --lib --target "$t" >"$fake/$t.log" 2>&1; then
    echo "$t: ok (Rust code; aws-lc-sys's C through the no-op stand-in)"
  elif grep -q 'supports Unix (Linux, macOS) and Windows targets only' "$fake/$t.log"; then
    echo "$t: refused as designed (the compile_error! of src/platform/)"
  else
    echo "$t: FAILED: $(grep -m1 '^error' "$fake/$t.log")"
    status=1
  fi
done
exit $status
