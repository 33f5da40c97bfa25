#pragma once
// The guest job: what one trial's guest runs, serialised for the in-guest agent
// (guests/agent/init.sh) and shipped as a tiny cpio archive appended to the initramfs.
//
// Job file format (version 4), read by the agent line by line WITHOUT eval (version 4 has the lines of
// version 3 and asks for an agent that reports each run's CPU: its CPU record, guest/records.hpp; an
// agent of version 3 refuses it instead of leaving the runs' cost out in silence):
//   abvm-job 4                  first line, exactly
//   trial <id>                  [A-Za-z0-9_.-]+
//   nonce <nonce>               [A-Za-z0-9]{8,64}; every record the guest prints carries it
//   scratch <serial>            virtio-blk serial of the disk a workload writes to unless it names one
//   pace free|together|turns    free: runs one after the other, records as they go. together, turns:
//                               each step is a window the host opens ("go <step>") and closes
//                               ("stop <step>") for the block's two guests at once or one at a time;
//                               the agent says READY before the go and DONE after its run, and prints
//                               the run's records after the stop ("abort": the partner failed)
//   fill 0|1                    paced: after its run the guest repeats it, unmeasured, until the stop
//   wait <seconds>              the longest the agent waits for any one word of the host
//   hold <seconds>              after its END record, how long the agent waits for the host to end
//                               the guest before it powers off by itself
//   workload <name>             starts a workload; [A-Za-z0-9_.-]+, the name its records carry
//   disk <serial>               optional: its scratch disk (one guest measuring both sides' disks)
//   kind dd|fio
//   repetitions <n>  warmup <n>  sync 0|1  drop_caches 0|1  scheduler_none 0|1
//   arg <argument>              one per line, argv[0] first; the rest of the line is taken
//                               literally (spaces, quotes, '$' included)
//   jobline <text>              fio job file lines (the agent writes them to a file that
//                               replaces "@jobfile" in the arguments)
//   end                         closes the workload
//   step <workload> <warmup 0|1> <index>
//                               one run, in the order given: the workload's 0-based position in
//                               the job, warm-up or measured, and its index among those; without
//                               any step line, each workload's warm-ups and then its measured runs,
//                               workload after workload
//   done                        last line; a job without it is treated as truncated
// "@scratch" anywhere in an argument or job line becomes /dev/<the workload's disk> in the guest.
// Values cannot contain newlines, carriage returns or NUL bytes: serialise_job throws Error.
#include <string>
#include <vector>

#include "config/design.hpp"
#include "config/workload.hpp"

namespace abvm {

// One workload as the guest runs it: the experiment's workload (its tool arguments), the name its
// records carry (the workload's own, or one per side when one guest measures both), and its disk.
struct JobWorkload {
  Workload workload;
  std::string report_name;       // empty: workload.name
  std::string disk_serial;       // empty: the job's scratch serial
  const std::string& name() const { return report_name.empty() ? workload.name : report_name; }
};

// One run of the job, in execution order.
struct JobStep {
  std::size_t workload = 0;      // index into GuestJob::workloads
  bool warmup = false;
  int index = 0;                 // among the workload's warm-ups, or among its measured runs
  bool operator==(const JobStep&) const = default;
};

// The `pace` line's word for config/design.hpp's Pacing.
std::string_view to_string(Pacing p);

struct GuestJob {
  std::string trial_id;
  std::string nonce;
  std::vector<JobWorkload> workloads;
  std::vector<JobStep> steps;    // empty: the default order (see above)
  Pacing pace = Pacing::free;
  bool fill = false;             // paced: keep the load going after the run until the stop
  int wait_seconds = 600;        // the agent's own deadline for each word of the host
  int hold_seconds = 60;         // after END: the longest the agent waits to be ended
  std::string scratch_serial = "abvm-scratch";
};

// The job's workloads as one guest of one side runs them: each on the job's scratch disk.
std::vector<JobWorkload> job_workloads(const std::vector<Workload>& workloads);

// The default order: each workload's warm-ups, then its measured runs, workload after workload.
std::vector<JobStep> default_steps(const std::vector<JobWorkload>& workloads);

// The command the agent runs for one workload (argv[0] is its kind's tool, e.g. "dd" or "fio"; GNU
// dd and a static fio come first in the guest's PATH). fio always gets --output-format.
std::vector<std::string> workload_argv(const Workload& workload);

// The job file text (format above). Throws Error naming the offending field.
std::string serialise_job(const GuestJob& job);

// A newc cpio archive holding abvm/job: the third initramfs piece.
std::string build_job_archive(const GuestJob& job);

// A fresh random nonce (32 hex digits) for one trial.
std::string make_nonce();

}  // namespace abvm
