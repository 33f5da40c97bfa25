#pragma once
// abvm's vocabulary: the few words every stage shares, one type each. A side, a trial's (or
// run's) outcome, which way a metric is better, and the accelerator are spelled here once and
// written to files with these exact words (journal, ledger, analysis.json, reports).
#include <optional>
#include <string>
#include <string_view>

namespace abvm {

// A git commit as reports and notes name it: its first 12 hex digits (`git log --abbrev=12`).
inline std::string short_sha(std::string_view sha) { return std::string(sha.substr(0, 12)); }

// The two sides of an A/B experiment: "A" and "B".
enum class Side { a, b };
inline constexpr Side kSides[] = {Side::a, Side::b};
const char* to_string(Side side);
std::optional<Side> parse_side(std::string_view text);

// How a trial (one boot), or one measured run inside it, ended:
//   ok               every measured run came back with exit status 0
//   workload-failed  the guest reported, but a tool exited non-zero (per run) or the agent
//                    itself reported an error (no scratch disk, insmod failed)
//   panic            the console shows a kernel panic (or the driver saw the guest crash)
//   timeout          no end record within the boot + run timeout; the guest was destroyed
//   infra-error      the hypervisor could not start or watch the guest, after the bounded retries
//   invalid-output   the records cannot be trusted: no begin/end, bad checksums, a foreign trial,
//                    runs missing, a console over its cap; or a tool's output that does not parse
// mismatch: the guest was not what its side must be (kernel, command line, negotiated features).
// partner_failed: a guest whose paced partner (the other guest of its block) failed, so its runs
// have no partner measured under the same conditions; its block runs again.
enum class Outcome { ok, workload_failed, panic, timeout, infra_error, invalid_output, mismatch, partner_failed };
const char* to_string(Outcome outcome);
std::optional<Outcome> parse_outcome(std::string_view text);
// "ok, workload-failed, panic, timeout, infra-error, invalid-output, mismatch, partner-failed", for error messages.
const char* outcome_words();

// Which way a metric is better: "higher" (bandwidth, IOPS) or "lower" (latency, seconds).
enum class Better { higher, lower };
const char* to_string(Better better);
std::optional<Better> parse_better(std::string_view text);

// The accelerator a guest ran under: "kvm" or "tcg" (QEMU's emulator).
enum class Accelerator { kvm, tcg };
const char* to_string(Accelerator accelerator);
std::optional<Accelerator> parse_accelerator(std::string_view text);

// How the host counted a guest's QEMU CPU time: "libvirt" (its statistics' cpu.time, the cgroup's
// usage in ns), "schedstat" (the sum of the QEMU's live threads' /proc/<pid>/task/<tid>/schedstat, ns)
// or "ticks" (/proc/<pid>/stat's utime + stime, in 10 ms clock ticks).
enum class CpuClock { libvirt, schedstat, ticks };
const char* to_string(CpuClock clock);
std::optional<CpuClock> parse_cpu_clock(std::string_view text);

}  // namespace abvm
