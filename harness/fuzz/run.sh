#!/usr/bin/env bash
# Builds abvm's libFuzzer programs with clang (ASan + UBSan) into build-fuzz/ and runs each one for
# a bounded time, starting from its seed corpus and its kept regression inputs.
#
#   harness/fuzz/run.sh [SECONDS] [TARGET...]     default 60 s per target, every target
#   ABVM_FUZZ_BUILD=DIR harness/fuzz/run.sh ...     another build directory (kept as it is if it
#                                                   is configured with -DABVM_FUZZ=ON already)
#
# Exits non-zero when a build fails or any target crashes, leaks, hangs (-timeout) or runs out of
# memory; the input that did it is left in build-fuzz/artifacts/<target>/ and printed. Keep it in
# harness/fuzz/regressions/<target>/ once fixed: tests/cli_fuzz_regressions_test.cpp replays it.
# New corpus entries the fuzzer finds go to build-fuzz/corpus/<target>/ (not into the source tree).
set -euo pipefail

seconds=${1:-60}
shift || true
case "$seconds" in ''|*[!0-9]*) echo "usage: $0 [SECONDS] [TARGET...]" >&2; exit 2 ;; esac

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${ABVM_FUZZ_BUILD:-$root/build-fuzz}
cxx=${ABVM_FUZZ_CXX:-$(command -v clang++-14 || command -v clang++ || true)}
if [ -z "$cxx" ]; then
  echo "run.sh: no clang++ found: install clang-14 and libclang-rt-14-dev (harness/setup.sh)" >&2
  exit 2
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$here"/fuzz_*.cpp; do t=$(basename "$f" .cpp); targets+=("${t#fuzz_}"); done
fi

# A build directory already configured with -DABVM_FUZZ=ON is used as it is: CI's sanitizer build
# (.ci/run) builds the unit tests and the fuzz programs from one set of instrumented objects.
if ! grep -qs '^ABVM_FUZZ:BOOL=ON$' "$build/CMakeCache.txt"; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DABVM_FUZZ=ON -DABVM_BUILD_TESTS=OFF -DABVM_BUILD_BENCH=OFF >/dev/null
fi
build_targets=()
for t in "${targets[@]}"; do build_targets+=("abvm_fuzz_$t"); done
cmake --build "$build" --target "${build_targets[@]}" -j2

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  artifacts="$build/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  seeds=()
  for d in "$here/corpus/$t" "$here/regressions/$t"; do [ -d "$d" ] && seeds+=("$d"); done
  dict=()
  [ -f "$here/dict/$t.dict" ] && dict=("-dict=$here/dict/$t.dict")
  echo "== fuzz_$t: ${seconds}s" >&2
  # -timeout: an input that takes over 10 s is a hang; -rss_limit_mb: runaway memory is a bug too.
  if ! "$build/harness/fuzz/abvm_fuzz_$t" "$corpus" "${seeds[@]}" "${dict[@]}" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" 2>"$build/fuzz_$t.log"; then
    tail -n 40 "$build/fuzz_$t.log" >&2
    echo "run.sh: fuzz_$t FAILED; inputs in $artifacts:" >&2
    ls -1 "$artifacts" >&2 || true
    failed+=("$t")
  else
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)|^#[0-9]+.*DONE' "$build/fuzz_$t.log" >&2 || true
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run.sh: crashes in: ${failed[*]}" >&2
  exit 1
fi
echo "run.sh: ${#targets[@]} target(s), ${seconds}s each, no crash" >&2
