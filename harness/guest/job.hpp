#pragma once
// The guest job: what one trial's guest runs, serialised for the in-guest agent
// (guests/agent/init.sh) and shipped as a tiny cpio archive appended to the initramfs.
//
// Job file format (version 1), read by the agent line by line WITHOUT eval:
//   abvm-job 1                  first line, exactly
//   trial <id>                  [A-Za-z0-9_.-]+
//   nonce <nonce>               [A-Za-z0-9]{8,64}; every record the guest prints carries it
//   scratch <serial>            virtio-blk serial of the only disk the guest may write to
//   workload <name>             starts a workload; [A-Za-z0-9_.-]+
//   kind dd|fio
//   repetitions <n>  warmup <n>  sync 0|1  drop_caches 0|1  scheduler_none 0|1
//   arg <argument>              one per line, argv[0] first; the rest of the line is taken
//                               literally (spaces, quotes, '$' included)
//   jobline <text>              fio job file lines (the agent writes them to a file that
//                               replaces "@jobfile" in the arguments)
//   end                         closes the workload
//   done                        last line; a job without it is treated as truncated
// "@scratch" anywhere in an argument or job line becomes /dev/<scratch disk> in the guest.
// Values cannot contain newlines, carriage returns or NUL bytes: serialise_job throws Error.
#include <string>
#include <vector>

#include "config/workload.hpp"

namespace abvm {

struct GuestJob {
  std::string trial_id;
  std::string nonce;
  std::vector<Workload> workloads;
  std::string scratch_serial = "abvm-scratch";
};

// The command the agent runs for one workload (argv[0] is "dd" or "fio"; GNU dd and a
// static fio come first in the guest's PATH). fio always gets --output-format.
std::vector<std::string> workload_argv(const Workload& workload);

// The job file text (format above). Throws Error naming the offending field.
std::string serialise_job(const GuestJob& job);

// A newc cpio archive holding abvm/job: the third initramfs piece.
std::string build_job_archive(const GuestJob& job);

// A fresh random nonce (32 hex digits) for one trial.
std::string make_nonce();

}  // namespace abvm
