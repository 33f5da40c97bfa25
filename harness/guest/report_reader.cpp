#include "guest/report_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base64.hpp"

namespace abvm::detail {
namespace {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  while (true) {
    const auto p = s.find(sep);
    out.emplace_back(s.substr(0, p));
    if (p == std::string_view::npos) break;
    s.remove_prefix(p + 1);
  }
  return out;
}

template <typename T>
bool parse_number(const std::string& text, T& out) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && !text.empty();
}

// Reads the checked records, in sequence order, into a GuestReport.
class ReportReader {
 public:
  explicit ReportReader(GuestReport& report) : report_(report) {}

  void take(std::uint64_t seq, const Record& rec) {
    if (report_.ended) {
      bad(rec, "after the end record");
      return;
    }
    if (seq != expected_) {
      report_.problems.push_back(
          seq == expected_ + 1 ? fmt::format("record {} is missing", expected_)
                               : fmt::format("records {} to {} are missing", expected_, seq - 1));
    }
    expected_ = seq + 1;
    const auto fields = split(rec.payload, ',');
    if (rec.type == "BEGIN") {
      report_.begun = true;
      if (fields.size() == 2) {
        report_.trial_id = base64_decode(fields[0]).value_or("");
        if (parse_number(fields[1], report_.boot_uptime)) mark({.seq = seq, .t = report_.boot_uptime});
      }
    } else if (rec.type == "UNAME") {
      if (auto t = text(rec)) report_.kernel_release = *t;
    } else if (rec.type == "KVERSION") {
      if (auto t = text(rec)) report_.kernel_version = *t;
    } else if (rec.type == "CMDLINE") {
      if (auto t = text(rec)) report_.cmdline = *t;
    } else if (rec.type == "FEATURES") {
      features(rec);
    } else if (rec.type == "NEXT") {
      next_run_record(seq, rec, fields);
    } else if (rec.type == "RUN") {
      start_run(seq, rec, fields);
    } else if (rec.type == "OUT") {
      if (!open_run_) bad(rec, "output outside a run");
      else open_b64_ += rec.payload;
    } else if (rec.type == "RUNEND") {
      end_run(seq, rec, fields);
    } else if (rec.type == "CPU") {
      run_cpu(rec, fields);
    } else if (rec.type == "MODPARAM") {
      module_param(rec);
    } else if (rec.type == "DMESG") {
      if (auto t = text(rec)) report_.dmesg.push_back(*t);
    } else if (rec.type == "ERROR") {
      if (auto t = text(rec)) report_.agent_errors.push_back(*t);
    } else if (rec.type == "READY" || rec.type == "DONE") {
      step_record(seq, rec, fields);
    } else if (rec.type == "END") {
      report_.ended = true;
    } else {
      bad(rec, "unknown record type");
    }
  }

  // What the whole sequence lacks: a run left open, the begin or the end record.
  void finish() {
    if (open_run_) {
      report_.problems.push_back(fmt::format("run {} #{} started but never ended (guest stopped mid-run?)",
                                             open_run_->workload, open_run_->index));
    }
    if (!report_.begun) report_.problems.push_back("no begin record: the agent never reported");
    if (report_.begun && !report_.ended) report_.problems.push_back("no end record: the guest output stops early");
  }

 private:
  void bad(const Record& rec, std::string_view why) {
    report_.problems.push_back(fmt::format("record {} ({}): {}", rec.seq, rec.type, why));
  }

  std::optional<std::string> text(const Record& rec) {
    auto decoded = base64_decode(rec.payload);
    if (!decoded) bad(rec, "payload is not base64");
    return decoded;
  }

  // "[<serial>,]<bits>|none": one per scratch disk (the agent before job version 2: no serial).
  void features(const Record& rec) {
    std::string_view payload = rec.payload;
    std::string serial;
    if (const auto comma = payload.find(','); comma != std::string_view::npos) {
      serial = std::string(payload.substr(0, comma));
      payload.remove_prefix(comma + 1);
      if (serial.empty() || serial.size() > 20 || !std::all_of(serial.begin(), serial.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
          })) {
        bad(rec, "disk serial is not a plain name");
        return;
      }
    }
    if (payload == "none") return;
    // sysfs prints one '0'/'1' per feature bit, bit 0 first (virtio's features_show).
    std::uint64_t bits = 0;
    bool good = !payload.empty();
    for (std::size_t i = 0; i < payload.size() && good; ++i) {
      if (payload[i] != '0' && payload[i] != '1') good = false;
      else if (payload[i] == '1' && i < 64) bits |= std::uint64_t{1} << i;
    }
    if (!good) {
      bad(rec, "feature bits are not 0/1");
      return;
    }
    if (!serial.empty()) {
      if (report_.disk_features.size() >= kMaxReportedDisks && !report_.disk_features.contains(serial)) {
        bad(rec, fmt::format("more than {} disks", kMaxReportedDisks));
        return;
      }
      report_.disk_features[serial] = bits;
    }
    if (report_.blk_features) return;  // the first disk's are the guest's
    report_.blk_features = bits;
    report_.access_platform = (bits >> kVirtioFAccessPlatform) & 1;
  }

  // "<module>.<param>=<value>": the name becomes a JSON key and is shown in reports, so it
  // must look like one sysfs could have (module and parameter names are C identifiers).
  void module_param(const Record& rec) {
    const auto t = text(rec);
    if (!t) return;
    const auto eq = t->find('=');
    const std::string name = t->substr(0, eq);
    const auto dot = name.find('.');
    const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    });
    if (eq == std::string::npos || dot == 0 || dot == std::string::npos || dot + 1 == name.size() || !plain) {
      bad(rec, "not a module parameter (<module>.<param>=<value>)");
    } else if (report_.module_params.size() >= kMaxModuleParams) {
      bad(rec, fmt::format("more than {} module parameters", kMaxModuleParams));
    } else {
      report_.module_params[name] = t->substr(eq + 1);
    }
  }

  // A paced step: the host reads READY and DONE from the live console; here they are clock marks.
  // READY is "step,t". DONE is "step" (the agent makes it before READY, so that no checksum runs as
  // the measured run ends: its time comes with the run's RUNEND, t_done) or "step,t" (older agents).
  void step_record(std::uint64_t seq, const Record& rec, const std::vector<std::string>& fields) {
    long step = -1;
    double t = 0;
    const bool timeless_done = rec.type == "DONE" && fields.size() == 1;
    if ((fields.size() != 2 && !timeless_done) || !parse_number(fields[0], step) || step < 0 ||
        (!timeless_done && !parse_number(fields[1], t))) {
      bad(rec, "malformed step record");
      return;
    }
    if (timeless_done) {
      done_seq_[step] = seq;  // a mark once its RUNEND gives the time (bounded: at most one per step)
      if (done_seq_.size() > kMaxClockMarks) done_seq_.erase(step);
    } else {
      mark({.seq = seq, .t = t, .step = step});
    }
    if (rec.type == "DONE" && report_.steps_done.size() < kMaxClockMarks) report_.steps_done.push_back(step);
  }

  void mark(const GuestClockMark& m) {
    if (report_.clock_marks.size() < kMaxClockMarks) report_.clock_marks.push_back(m);
  }
  long next_run() const { return static_cast<long>(report_.runs.size()); }

  // "workload,index,warmup": the unpaced run that RUN will start next is being prepared.
  void next_run_record(std::uint64_t seq, const Record& rec, const std::vector<std::string>& fields) {
    int index = -1;
    if (fields.size() != 3 || !parse_number(fields[1], index) || (fields[2] != "0" && fields[2] != "1")) {
      bad(rec, "malformed next-run record");
      return;
    }
    next_ = NextRun{.seq = seq, .workload = fields[0], .index = index, .warmup = fields[2] == "1"};
  }

  // "workload,index,warmup,t_start" as the run starts, or after a paced run's window with
  // ",step,t_ready,t_go" more.
  void start_run(std::uint64_t seq, const Record& rec, const std::vector<std::string>& fields) {
    if (open_run_) bad(rec, fmt::format("run {} #{} has no end", open_run_->workload, open_run_->index));
    open_run_.reset();
    open_b64_.clear();
    open_mark_.reset();
    GuestRun run;
    const bool paced = fields.size() == 7;
    if ((fields.size() != 4 && !paced) || !parse_number(fields[1], run.index) ||
        (fields[2] != "0" && fields[2] != "1") || !parse_number(fields[3], run.t_start)) {
      bad(rec, "malformed run start");
      return;
    }
    if (paced) {
      GuestWindow w;
      if (!parse_number(fields[4], w.step) || w.step < 0 || !parse_number(fields[5], w.t_ready) ||
          !parse_number(fields[6], w.t_go)) {
        bad(rec, "malformed run start");
        return;
      }
      run.window = w;
    } else {
      open_mark_ = GuestClockMark{.seq = seq, .t = run.t_start};  // kept once the run has ended well
    }
    // The name becomes a file name on the host (trials/<id>/<workload>-run<i>.out): only the
    // job's own name characters, so a guest cannot name a run "../../x".
    if (fields[0].empty() || fields[0] == "." || fields[0] == ".." ||
        !std::all_of(fields[0].begin(), fields[0].end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
        })) {
      bad(rec, fmt::format("workload name '{}' is not a plain name", fields[0]));
      return;
    }
    run.workload = fields[0];
    run.warmup = fields[2] == "1";
    if (next_ && !run.window && next_->workload == run.workload && next_->index == run.index &&
        next_->warmup == run.warmup) {
      run.next_seq = next_->seq;
    }
    next_.reset();
    open_run_ = std::move(run);
  }

  // "workload,index,status,t_end", or for a paced run ",t_fill,t_stop,t_load_end,fills" more, and
  // ",t_done" (when DONE was printed) from agents whose DONE carries no time.
  void end_run(std::uint64_t seq, const Record& rec, const std::vector<std::string>& fields) {
    if (!open_run_) {
      bad(rec, "run end without a run start");
      return;
    }
    GuestRun run = std::move(*open_run_);
    open_run_.reset();
    int index = -1;
    const bool with_done = run.window && fields.size() == 9;
    const std::size_t expected = run.window ? (with_done ? 9 : 8) : 4;
    if (fields.size() != expected || fields[0] != run.workload || !parse_number(fields[1], index) ||
        index != run.index || !parse_number(fields[2], run.exit_status) || !parse_number(fields[3], run.t_end)) {
      bad(rec, "run end does not match its start");
      return;
    }
    if (run.window) {
      GuestWindow& w = *run.window;
      if (!parse_number(fields[4], w.t_fill) || !parse_number(fields[5], w.t_stop) ||
          !parse_number(fields[6], w.t_load_end) || !parse_number(fields[7], w.fills) || w.fills < 0) {
        bad(rec, "malformed paced run end");
        return;
      }
      if (with_done) {
        double t_done = 0;
        if (!parse_number(fields[8], t_done)) {
          bad(rec, "malformed paced run end");
          return;
        }
        if (const auto done = done_seq_.find(w.step); done != done_seq_.end()) {
          mark({.seq = done->second, .t = t_done, .step = w.step});
        }
      }
    }
    auto out = base64_decode(open_b64_);
    if (!out) {
      bad(rec, "run output is not base64 (a chunk is missing?)");
      return;
    }
    run.output = std::move(*out);
    if (!run.window && open_mark_) {
      mark({.seq = open_mark_->seq, .t = open_mark_->t, .run = next_run()});
      mark({.seq = seq, .t = run.t_end, .run = next_run()});
    }
    report_.runs.push_back(std::move(run));
  }

  // "workload,index,busy,all": the CPU ticks of the run that just ended (the last one reported).
  void run_cpu(const Record& rec, const std::vector<std::string>& fields) {
    GuestCpuTicks t;
    int index = -1;
    if (fields.size() != 4 || !parse_number(fields[1], index) || !parse_number(fields[2], t.busy) ||
        !parse_number(fields[3], t.all) || t.busy > t.all) {
      bad(rec, "malformed CPU record");
      return;
    }
    if (open_run_ || report_.runs.empty() || report_.runs.back().workload != fields[0] ||
        report_.runs.back().index != index || report_.runs.back().cpu) {
      bad(rec, "CPU record without the end of its run just before");
      return;
    }
    report_.runs.back().cpu = t;
  }

  GuestReport& report_;
  std::optional<GuestRun> open_run_;
  std::optional<GuestClockMark> open_mark_;  // an unpaced run's start, until it has ended
  std::map<long, std::uint64_t> done_seq_;    // a timeless DONE's sequence number by its step
  struct NextRun {
    std::uint64_t seq = 0;
    std::string workload;
    int index = 0;
    bool warmup = false;
  };
  std::optional<NextRun> next_;               // the last NEXT, until the RUN it announced
  std::string open_b64_;    // the open run's OUT payloads so far
  std::uint64_t expected_ = 0;
};

}  // namespace

void read_report(const std::map<std::uint64_t, Record>& records, GuestReport& report) {
  ReportReader reader(report);
  for (const auto& [seq, rec] : records) reader.take(seq, rec);
  reader.finish();
}

}  // namespace abvm::detail
