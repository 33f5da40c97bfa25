#pragma once
// The guest's results: framed, checksummed records on the serial console, and their parser.
//
// The agent (guests/agent/init.sh) prints one record per line:
//     ABVM2:<nonce>:<seq>:<type>:<payload>:<md5>
// where <md5> is the lowercase hex MD5 (busybox md5sum, RFC 1321) of
// "<nonce>:<seq>:<type>:<payload>", <seq> counts records from 0, and free text is base64.
// See init.sh for the record types. MD5 is not for security here: the nonce (fresh per trial)
// keeps records of another trial or a stale log out, the checksum catches corrupted or
// spliced lines.
//
// The parser finds records anywhere in the console text: boot messages, kernel warnings and
// stray output around them are skipped. When kernel text is printed in the middle of a record
// line, the record is rebuilt by trying the line's continuation after the next line breaks and
// keeping the one whose checksum matches. What cannot be trusted (bad checksum, foreign nonce,
// truncated record, missing sequence numbers, a run without its end) is left out and described
// in `problems`; parsing itself never throws.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base64.hpp"

namespace abvm {

// A guest reports a few dozen module parameters; more is not a guest abvm built.
inline constexpr std::size_t kMaxModuleParams = 512;

// A guest has one or two scratch disks; more reports are not a guest abvm built.
inline constexpr std::size_t kMaxReportedDisks = 8;

// VIRTIO_F_ACCESS_PLATFORM: the device needs the platform DMA API (IOMMU/bounce) path.
inline constexpr int kVirtioFAccessPlatform = 33;

// A paced run's window as its guest saw it (guest clock, s): the host opened it with "go <step>"
// and closed it with "stop <step>" (guests/agent/init.sh run_paced_step).
struct GuestWindow {
  long step = 0;
  double t_ready = 0;      // READY printed: the run prepared, waiting for the go
  double t_go = 0;         // the go heard
  double t_fill = 0;       // the filler started (== the run's end without one)
  double t_stop = 0;       // the stop (or abort) heard
  double t_load_end = 0;   // the filler ended (== the run's end without one)
  int fills = 0;           // filler runs begun
};

// The guest's CPU time over one run, from /proc/stat (guests/agent/init.sh cpu_ticks): USER_HZ ticks
// of 10 ms summed over its CPUs, so a run of a second is counted to about 1 %. `all` is every
// tick that passed on every CPU; steal stays 0 under TCG (the guest cannot see the emulator).
struct GuestCpuTicks {
  std::uint64_t busy = 0;  // user + nice + system + irq + softirq
  std::uint64_t all = 0;   // busy + idle + iowait + steal
  bool operator==(const GuestCpuTicks&) const = default;
};

struct GuestRun {
  std::string workload;
  int index = 0;           // counts warm-up and measured runs separately, from 0
  bool warmup = false;
  int exit_status = -1;    // the tool's exit status in the guest
  double t_start = 0;      // guest clock (s) before and after the tool ran
  double t_end = 0;
  std::string output;      // the tool's raw stdout+stderr
  std::optional<GuestWindow> window;  // paced runs only
  std::optional<GuestCpuTicks> cpu;   // the CPU record after its RUNEND (agents before it: none)
  // Unpaced runs: the sequence number of the NEXT record printed before the run's preparation, where
  // the host reads the run's starting statistics (agents before it: none).
  std::optional<std::uint64_t> next_seq;
};

// A record printed the moment its guest time was read (BEGIN, READY, DONE, an unpaced RUN or
// RUNEND): with the time it reached the host, it bounds the offset between the two clocks.
struct GuestClockMark {
  std::uint64_t seq = 0;   // the record's sequence number
  double t = 0;            // the guest time it carries
  long step = -1;          // READY and DONE: the paced step
  long run = -1;           // an unpaced RUN or RUNEND: its run's index in GuestReport::runs
  bool operator==(const GuestClockMark&) const = default;
};

// A guest prints a few marks per run; more is not a guest abvm built.
inline constexpr std::size_t kMaxClockMarks = std::size_t{1} << 16;

struct GuestReport {
  bool begun = false;
  bool ended = false;
  std::string trial_id;
  double boot_uptime = 0;                    // guest uptime (s) when the agent started reporting
  std::string kernel_release;                // uname -r
  std::string kernel_version;                // uname -v: the build ("#1 SMP abvm-41398041b319")
  std::string cmdline;                       // /proc/cmdline
  std::optional<std::uint64_t> blk_features; // first scratch disk's negotiated virtio features, bit i = feature i
  bool access_platform = false;              // bit 33 of blk_features
  // Every scratch disk's negotiated features by its serial (at most kMaxReportedDisks).
  std::map<std::string, std::uint64_t> disk_features;
  std::vector<GuestRun> runs;
  // What the kernel held under /sys/module/<m>/parameters after the agent loaded its modules,
  // e.g. "virtio_blk.queue_depth" -> "1" (MODPARAM records; at most kMaxModuleParams).
  std::map<std::string, std::string> module_params;
  std::vector<std::string> dmesg;            // kernel log lines of interest
  std::vector<std::string> agent_errors;     // what the agent itself reported (bad job, no scratch disk, ...)
  std::vector<GuestClockMark> clock_marks;   // at most kMaxClockMarks
  std::vector<long> steps_done;              // paced: the steps whose DONE record came, in order
  std::vector<std::string> problems;         // what the parser could not trust
};

// The longest record line the agent prints, marker to checksum; init.sh's rec() prints an ERROR
// record instead of a longer one. Its longest genuine record is one line of base64 free text:
// a sysfs value (MODPARAM, at most a 4 KiB page), /proc/cmdline (2 KiB on x86) or a printk line
// (1 KiB), about 5.5 KiB encoded; 16 KiB leaves room for every field. No longer record is
// accepted, whole or rebuilt, so rebuilding never looks further than this from a marker.
inline constexpr std::size_t kMaxRecordLength = 16384;

// Kernel text printed in the middle of a record line may stick to the record's head: its first
// word, which lies within one printk record's text (at most 1 KiB, PRINTKRB_RECORD_MAX).
inline constexpr std::size_t kMaxGluedKernelText = 1024;

// Rebuilding split records costs a checksum per candidate split; in all it may hash this base
// plus this much per console byte. A real console needs a tiny part of it (the agent keeps
// printk off the console); a console that needs more is hostile, and the records that would
// need more rebuilding are reported as problems.
inline constexpr std::uint64_t kRecoveryBudgetBase = std::uint64_t{16} << 20;
inline constexpr std::uint64_t kRecoveryBudgetPerByte = 2;

// What parsing cost, for tests that prove it linear in the console size: bytes visited while
// looking for records, and bytes hashed to check them.
struct ParseWork {
  std::uint64_t scanned = 0;
  std::uint64_t hashed = 0;
};

// Linear in the console's size (see ParseWork): each byte is visited a bounded number of times.
GuestReport parse_guest_console(std::string_view console, std::string_view nonce, ParseWork* work = nullptr);

// "ABVM2:<nonce>:": how every record of this nonce starts. The record format is spelled here
// only; callers that look for records (the accel probe, scripts via `abvm`) ask for it.
std::string record_prefix(std::string_view nonce);

// True once the console holds this nonce's END record line: the guest is done reporting.
// Cheap and unchecked (no checksum): it only says when to stop waiting; parse_guest_console
// decides what the records mean.
bool console_has_end_record(std::string_view console, std::string_view nonce);

// Where the first kernel panic message ("Kernel panic - not syncing", as panic() prints it)
// starts in the console, or npos. The one panic check: the driver and the trial's
// classification both ask here.
std::size_t find_kernel_panic(std::string_view console);

// Lowercase hex MD5 of `data` (RFC 1321), as busybox md5sum prints it.
std::string md5_hex(std::string_view data);


// One record line as the agent prints it, without the newline (for tests and fakes).
std::string format_guest_record(std::string_view nonce, std::uint64_t seq, std::string_view type,
                                std::string_view payload);

}  // namespace abvm
