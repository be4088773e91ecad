#!/usr/bin/env bash
# A bounded run of every fuzz target (fuzz/, cargo-fuzz on the nightly toolchain): optional,
# not part of the test command. Provisions cargo-fuzz itself (from crates.io, into
# ~/.cargo/bin) and says it skipped when there is no nightly toolchain.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 45)
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${1:-45}"
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "fuzzing skipped: no nightly toolchain (rustup toolchain install nightly)" >&2
    exit 0
fi
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
for target in rpc_lines query chunkers git_output printed_names; do
    cargo +nightly fuzz run "$target" -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
done
