#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "config/load_sections.hpp"
#include "config/rules.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/units.hpp"

namespace abvm::loader {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t kMaxJobFileBytes = 1 << 20;

// What fio would refuse or silently not do, at the key to change: O_DIRECT on a device that has
// none, a queue depth a synchronous engine ignores.
void check_fio_options(const KeyReader& r, const std::string& p, const FioWorkload& fio) {
  const std::string& filename = fio.options.at("filename");
  if (fio.options.at("direct") == "1" && rules::refuses_direct(filename)) {
    r.fail(r.line_of(p + ".filename"), fmt::format("key '{}.filename' = {} with direct = true asks for O_DIRECT on a "
                                                   "device that cannot be opened with it (fio fails in every run): set "
                                                   "direct = false, or filename = \"@scratch\" (the default)",
                                                   p, quote(filename)));
  }
  const auto depth = fio.options.find("iodepth");
  const std::string& engine = fio.options.at("ioengine");
  const bool synchronous = std::find(rules::synchronous_ioengines.begin(), rules::synchronous_ioengines.end(),
                                     engine) != rules::synchronous_ioengines.end();
  if (depth != fio.options.end() && depth->second != "1" && synchronous) {
    r.fail(r.line_of(p + ".iodepth"), fmt::format("key '{}.iodepth' = {} has no effect with ioengine = {}: a synchronous "
                                                  "engine keeps one request in flight whatever iodepth says; set "
                                                  "ioengine = \"libaio\" or \"io_uring\" for a queue depth, or "
                                                  "remove iodepth",
                                                  p, depth->second, quote(engine)));
  }
}

// fio's options that abvm sets from keys of their own (and that options = {...} may not set).
const std::vector<std::string> kJobKeys = {"rw", "bs", "size", "direct", "ioengine", "filename",
                                           "iodepth", "numjobs", "runtime", "options"};

// job_file: the job file's text, read now (the guest gets it in its job); no job keys beside it.
void read_job_file(KeyReader& r, const std::string& p, const std::string& job_file, FioWorkload& fio) {
  for (const std::string& key : kJobKeys) {
    if (r.at(p + "." + key) != nullptr) {
      r.fail(r.line_of(p + "." + key), fmt::format("key '{}.{}' conflicts with job_file: set it in the job "
                                                   "file {}", p, key, quote(job_file)));
    }
  }
  const fs::path path = fs::path(job_file).is_absolute() ? fs::path(job_file) : r.base_dir() / job_file;
  // Only a regular, job-file-sized file: reading /dev/zero or a FIFO would never end, and
  // the text travels to the guest inside its initramfs.
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() != fs::file_type::not_found && st.type() != fs::file_type::none &&
      st.type() != fs::file_type::regular) {
    r.fail(r.line_of(p + ".job_file"), fmt::format("key '{}.job_file' = {} is not a regular file: name a fio job "
                                                   "file", p, quote(job_file)));
  }
  if (st.type() == fs::file_type::regular && fs::file_size(path, ec) > kMaxJobFileBytes) {
    r.fail(r.line_of(p + ".job_file"), fmt::format("key '{}.job_file' = {} is larger than {} bytes: a fio job file "
                                                   "is a few lines; name the right file", p, quote(job_file),
                                                   kMaxJobFileBytes));
  }
  try {
    fio.job_file = read_file(path);
  } catch (const Error& e) {
    r.fail(r.line_of(p + ".job_file"), fmt::format("key '{}.job_file': {}", p, e.what()));
  }
  fio.options.clear();
}

// options = {...}: fio options abvm passes on as they are.
void read_extra_options(KeyReader& r, const std::string& p, FioWorkload& fio) {
  std::vector<std::string> extra;
  if (const toml::node* options = r.at(p + ".options")) {
    for (const auto& [key, value] : *options->as_table()) {
      const std::string name(key.str());
      if (std::find(kJobKeys.begin(), kJobKeys.end(), name) != kJobKeys.end() || name == "time_based" ||
          name == "output-format" || name == "name") {
        r.fail(value.source().begin.line, fmt::format("key '{}.options.{}': set it with {}.{} instead, or "
                                                      "leave it to abvm", p, name, p, name));
      }
      const std::string text = value.is_string() ? value.as_string()->get()
                                                 : std::to_string(value.as_integer()->get());
      fio.options[name] = text;
      extra.push_back(fmt::format("{} = {}", name, quote(text)));
    }
  }
  r.note(p + ".options", fmt::format("{{{}}}", fmt::join(extra, ", ")));
}

// The job's options from the keys, fio's defaults where unset.
void read_job_options(KeyReader& r, const std::string& p, FioWorkload& fio) {
  const auto set = [&](const std::string& key, std::string value) { fio.options[key] = std::move(value); };
  if (auto v = r.get_string(p + ".rw")) set("rw", *v);
  r.note(p + ".rw", quote(fio.options["rw"]));
  if (auto v = r.get_size(p + ".bs")) set("bs", format_size(*v));
  r.note(p + ".bs", quote(fio.options["bs"]));
  if (auto v = r.get_size(p + ".size")) set("size", format_size(*v));
  r.note(p + ".size", quote(fio.options["size"]));
  if (auto v = r.get_bool(p + ".direct")) set("direct", *v ? "1" : "0");
  r.note(p + ".direct", render(fio.options["direct"] == "1"));
  if (auto v = r.get_string(p + ".ioengine")) set("ioengine", *v);
  r.note(p + ".ioengine", quote(fio.options["ioengine"]));
  if (auto v = r.get_string(p + ".filename")) set("filename", *v);
  r.note(p + ".filename", quote(fio.options["filename"]));
  const auto iodepth = r.get_int(p + ".iodepth");
  if (iodepth) set("iodepth", std::to_string(*iodepth));
  r.note(p + ".iodepth", render_optional(iodepth));
  const auto numjobs = r.get_int(p + ".numjobs");
  if (numjobs) set("numjobs", std::to_string(*numjobs));
  r.note(p + ".numjobs", render_optional(numjobs));
  const auto runtime = r.get_duration(p + ".runtime");
  if (runtime) {
    set("runtime", format_duration(*runtime));
    set("time_based", "1");
  }
  r.note(p + ".runtime", runtime ? quote(format_duration(*runtime)) : "unset");
  check_fio_options(r, p, fio);
  read_extra_options(r, p, fio);
}

}  // namespace

void read_kind(KeyReader& r, const std::string& p, FioWorkload& fio) {
  const std::string job_file = r.get_string(p + ".job_file").value_or("");
  r.note(p + ".job_file", quote(job_file));
  if (!job_file.empty()) {
    read_job_file(r, p, job_file, fio);
  } else {
    read_job_options(r, p, fio);
  }
  fio.output_format = r.get_string(p + ".output_format").value_or(fio.output_format);
  r.note(p + ".output_format", quote(fio.output_format));
}

}  // namespace abvm::loader
