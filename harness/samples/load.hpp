#pragma once
// Input files and journals -> SampleSet, the one thing the statistics stage reads.
//
// From files (`abvm analyze --a FILE... --b FILE...`): each file is dd output, fio JSON or
// plain numbers (one format for all files, detected unless given). Every run becomes one
// sample per metric, with order = its index within its side in input order (files in the
// order given, runs in file order), order_known = false and no boot.
//   dd       "dd.bandwidth" (B/s, higher) = bytes / seconds; "dd.seconds" (s, lower) is also
//            available with --metric dd.seconds.
//   fio      one run per JSON document; metrics as journal.hpp fio_metrics with workload
//            "fio": "fio.<job>.<dir>.bandwidth|iops|clat_mean|clat_p50|clat_p99". Jobs that
//            report an error become failures.
//   numbers  metric --metric (default "value"), unit --unit (default ""), direction required.
// --metric on dd or fio input selects that one metric (an Error lists the names available);
// --unit and a direction are for plain numbers only (dd and fio carry their own).
//
// From abvm's journal: order, boot, run_in_boot and block come from the journal
// (order_known = true); runs that are not ok become failures; hosts and accelerators are
// collected per side.
//
// Every metric must have samples on both sides: otherwise Error naming the metric and the
// side missing it. Metrics keep their first-seen order.
#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "samples/journal.hpp"
#include "samples/sample.hpp"

namespace abvm {

enum class InputFormat { auto_detect, dd, fio, numbers };
inline constexpr std::array<InputFormat, 4> kInputFormats = {InputFormat::auto_detect, InputFormat::dd,
                                                             InputFormat::fio, InputFormat::numbers};

// "auto", "dd", "fio", "numbers" (the --format values).
const char* to_string(InputFormat format);
std::optional<InputFormat> parse_input_format(std::string_view text);

struct InputOptions {
  InputFormat format = InputFormat::auto_detect;
  std::optional<std::string> metric;
  std::optional<std::string> unit;
  std::optional<Better> better;
};

// Which format a file's text is in: fio JSON, else dd summary lines, else plain numbers if
// every non-comment line is a number. Throws Error naming the file (and the first line that
// is not a number) and the --format to pass when none fits, or when the text is empty.
InputFormat detect_format(std::string_view text, std::string_view source);

SampleSet load_side_files(const std::vector<std::filesystem::path>& a_files,
                          const std::vector<std::filesystem::path>& b_files,
                          const InputOptions& options);

SampleSet load_journal_samples(const std::vector<JournalEntry>& entries);

// Reads dir/journal.jsonl (an unfinished last line becomes a note in SampleSet::notes).
SampleSet load_results_dir(const std::filesystem::path& dir);

// A results directory's journal read as it grows: each samples() parses only the lines appended
// since the last call (core/jsonl.hpp JsonlFollower) and gives what load_results_dir would give
// for the whole journal then. A sequential run's looks read it after every block: parsing the
// whole journal at each look costs O(looks x runs).
class JournalSamplesReader {
 public:
  explicit JournalSamplesReader(const std::filesystem::path& dir);
  SampleSet samples();

 private:
  std::filesystem::path dir_;
  JsonlFollower journal_;
  std::vector<JournalEntry> finished_;  // the entries of the finished lines read so far
};

}  // namespace abvm
