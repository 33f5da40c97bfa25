// Tests of samples/fio.hpp on real fio 3.33 output (tests/data/fio/README.md says how each
// file was made). Expected figures were read from the fixtures independently with Python:
//   /usr/bin/python3 -c "import json; d=json.load(open('seqwrite.json')); w=d['jobs'][0]['write'];
//     print(w['io_bytes'], w['bw_bytes'], w['iops'], w['clat_ns']['mean'],
//           w['clat_ns']['percentile']['50.000000'], w['clat_ns']['percentile']['99.000000'])"
// (for the files with lines before the JSON, after dropping those lines).
#include "samples/fio.hpp"

#include <gtest/gtest.h>

#include "samples_test_util.hpp"

namespace abvm {
namespace {

using test::data_text;
using test::error_of;

void expect_seqwrite(const FioDirection& d) {
  EXPECT_EQ(d.direction, "write");
  EXPECT_EQ(d.io_bytes, 16777216u);
  EXPECT_EQ(d.bandwidth, 2396745142.0);
  EXPECT_DOUBLE_EQ(d.iops, 2285.714286);
  EXPECT_DOUBLE_EQ(d.clat_mean_ns, 368380.5);
  EXPECT_EQ(d.clat_percentiles_ns.size(), 17u);
  EXPECT_EQ(d.clat_percentiles_ns.at(50.0), 296960.0);
  EXPECT_EQ(d.clat_percentiles_ns.at(99.0), 1368064.0);
  EXPECT_EQ(d.clat_percentiles_ns.at(99.99), 1368064.0);
}

TEST(Fio, SequentialWriteJson) {
  auto docs = parse_fio(data_text("fio/seqwrite.json"), "seqwrite.json");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].line, 1u);
  EXPECT_EQ(docs[0].fio_version, "fio-3.33");
  ASSERT_EQ(docs[0].jobs.size(), 1u);
  const FioJob& job = docs[0].jobs[0];
  EXPECT_EQ(job.name, "seqwrite");
  EXPECT_EQ(job.error, 0);
  // read and trim moved no bytes, so only write is listed.
  ASSERT_EQ(job.directions.size(), 1u);
  expect_seqwrite(job.directions[0]);
  // What the job cost its guest (usr_cpu, sys_cpu, job_runtime, ctx, read with Python as above).
  ASSERT_TRUE(job.cpu);
  EXPECT_DOUBLE_EQ(job.cpu->usr_pct, 66.666667);
  EXPECT_DOUBLE_EQ(job.cpu->sys_pct, 0);
  EXPECT_DOUBLE_EQ(job.cpu->runtime_ms, 6);
  EXPECT_EQ(job.cpu->ctx, 16u);
  EXPECT_NEAR(job.cpu->seconds(), 0.004, 1e-9);  // 66.67 % of 6 ms
}

// fio before job_runtime (or a job without the CPU fields): no CPU, never a CPU of zero.
TEST(Fio, AJobWithoutItsCpuFieldsHasNoCpu) {
  std::string text = data_text("fio/seqwrite.json");
  const std::size_t at = text.find("\"job_runtime\" : 6,");
  ASSERT_NE(at, std::string::npos);
  text.erase(at, std::string("\"job_runtime\" : 6,").size());
  const auto docs = parse_fio(text, "seqwrite.json");
  EXPECT_FALSE(docs[0].jobs[0].cpu);
  EXPECT_EQ(docs[0].jobs[0].directions.size(), 1u);
}

TEST(Fio, JsonPlusIgnoresBins) {
  auto docs = parse_fio(data_text("fio/seqwrite-jsonplus.json"), "seqwrite-jsonplus.json");
  ASSERT_EQ(docs.size(), 1u);
  ASSERT_EQ(docs[0].jobs.at(0).directions.size(), 1u);
  const FioDirection& d = docs[0].jobs[0].directions[0];
  EXPECT_EQ(d.io_bytes, 16777216u);
  EXPECT_EQ(d.bandwidth, 3355443200.0);
  EXPECT_DOUBLE_EQ(d.iops, 3200.0);
  EXPECT_DOUBLE_EQ(d.clat_mean_ns, 245464.5);
  EXPECT_EQ(d.clat_percentiles_ns.size(), 17u);
  EXPECT_EQ(d.clat_percentiles_ns.at(50.0), 224256.0);
}

TEST(Fio, RandomReadWriteHasBothDirections) {
  auto docs = parse_fio(data_text("fio/randrw.json"), "randrw.json");
  const FioJob& job = docs.at(0).jobs.at(0);
  ASSERT_EQ(job.directions.size(), 2u);
  const FioDirection& r = job.directions[0];
  const FioDirection& w = job.directions[1];
  EXPECT_EQ(r.direction, "read");
  EXPECT_EQ(r.io_bytes, 11567104u);
  EXPECT_EQ(r.bandwidth, 59933181.0);
  EXPECT_DOUBLE_EQ(r.iops, 14632.124352);
  EXPECT_DOUBLE_EQ(r.clat_mean_ns, 44245.024788);
  EXPECT_EQ(r.clat_percentiles_ns.at(50.0), 43776.0);
  EXPECT_EQ(r.clat_percentiles_ns.at(99.0), 70144.0);
  EXPECT_EQ(w.direction, "write");
  EXPECT_EQ(w.io_bytes, 5210112u);
  EXPECT_EQ(w.bandwidth, 26995398.0);
  EXPECT_DOUBLE_EQ(w.iops, 6590.673575);
  EXPECT_DOUBLE_EQ(w.clat_mean_ns, 52662.448113);
  EXPECT_EQ(w.clat_percentiles_ns.at(50.0), 49408.0);
  EXPECT_EQ(w.clat_percentiles_ns.at(99.0), 95744.0);
}

TEST(Fio, TwoJobsAfterADescriptionLine) {
  auto docs = parse_fio(data_text("fio/two-jobs.json"), "two-jobs.json");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].line, 2u);
  ASSERT_EQ(docs[0].jobs.size(), 2u);
  EXPECT_EQ(docs[0].jobs[0].name, "seqread");
  ASSERT_EQ(docs[0].jobs[0].directions.size(), 1u);
  EXPECT_EQ(docs[0].jobs[0].directions[0].direction, "read");
  EXPECT_EQ(docs[0].jobs[0].directions[0].bandwidth, 1525201454.0);
  EXPECT_EQ(docs[0].jobs[1].name, "seqwrite2");
  ASSERT_EQ(docs[0].jobs[1].directions.size(), 1u);
  EXPECT_EQ(docs[0].jobs[1].directions[0].direction, "write");
  EXPECT_EQ(docs[0].jobs[1].directions[0].io_bytes, 8388608u);
  EXPECT_EQ(docs[0].jobs[1].directions[0].bandwidth, 699050666.0);
}

TEST(Fio, WarningBeforeTheDocument) {
  auto docs = parse_fio(data_text("fio/warning-before.json"), "warning-before.json");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].line, 2u);
  EXPECT_EQ(docs[0].jobs.at(0).name, "qd4");
  EXPECT_EQ(docs[0].jobs[0].directions.at(0).bandwidth, 2097152000.0);
}

TEST(Fio, JobWithErrorIsAFailureWithoutFigures) {
  auto docs = parse_fio(data_text("fio/error-devfull.json"), "error-devfull.json");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].line, 4u);  // three lines of fio chatter come first
  ASSERT_EQ(docs[0].jobs.size(), 2u);
  EXPECT_EQ(docs[0].jobs[0].name, "okjob");
  EXPECT_EQ(docs[0].jobs[0].error, 0);
  EXPECT_EQ(docs[0].jobs[0].directions.size(), 1u);
  EXPECT_EQ(docs[0].jobs[1].name, "fulljob");
  EXPECT_EQ(docs[0].jobs[1].error, 28);
  EXPECT_TRUE(docs[0].jobs[1].directions.empty());
  EXPECT_EQ(describe_fio_error(docs[0].jobs[1]),
            "fio job 'fulljob' reported error 28 (No space left on device)");
}

TEST(Fio, SeveralDocumentsInOneFile) {
  auto docs = parse_fio(data_text("fio/two-documents.json"), "two-documents.json");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].line, 1u);
  EXPECT_EQ(docs[1].line, 270u);
  EXPECT_EQ(docs[0].jobs.at(0).directions.at(0).bandwidth, 2097152000.0);
  EXPECT_EQ(docs[1].jobs.at(0).directions.at(0).bandwidth, 2097152000.0);
}

TEST(Fio, TruncatedDocument) {
  EXPECT_EQ(error_of([] { parse_fio(data_text("fio/truncated.json"), "truncated.json"); }),
            "truncated.json:1: fio JSON document starting here is truncated (the text ends "
            "inside it): was fio or its writer killed? Rerun the job or remove the partial "
            "document");
  // A complete document followed by a cut one: the second one's line is named.
  std::string text = data_text("fio/seqwrite.json") + "warning\n" + data_text("fio/truncated.json");
  EXPECT_EQ(error_of([&] { parse_fio(text, "both.json"); }),
            "both.json:271: fio JSON document starting here is truncated (the text ends "
            "inside it): was fio or its writer killed? Rerun the job or remove the partial "
            "document");
}

TEST(Fio, ErrorsNameTheDocumentLine) {
  EXPECT_EQ(error_of([] { parse_fio("no json here\n", "x.json"); }),
            "x.json: no fio JSON document (a line starting with '{'): run fio with "
            "--output-format=json, or choose another --format");
  EXPECT_EQ(error_of([] { parse_fio("note\n{\"a\": 1}\n", "x.json"); }),
            "x.json:2: JSON document without \"jobs\": not fio output; run fio with "
            "--output-format=json");
  EXPECT_EQ(error_of([] { parse_fio("{\"jobs\": [{\"jobname\": \"j\", \"error\": 0, "
                                    "\"write\": {\"io_bytes\": 5, \"iops\": 1}}]}",
                                    "x.json"); }),
            "x.json:1: fio JSON: job 'j' write has no \"bw_bytes\": is this fio >= 3.0 output "
            "(--output-format=json)?");
  EXPECT_EQ(error_of([] { parse_fio("{\"jobs\": [{\"jobname\": \"j\", \"error\": \"5\"}]}",
                                    "x.json"); }),
            "x.json:1: fio JSON: job 'j'.error is not an integer");
  EXPECT_EQ(error_of([] { parse_fio("{\"jobs\": []}", "x.json"); }),
            "x.json:1: fio JSON: \"jobs\" is empty or not a list: fio ran no job");
  std::string bad = error_of([] { parse_fio("\n{\"jobs\": [}, \"}\"]}\n", "x.json"); });
  EXPECT_EQ(bad.substr(0, 50), "x.json:2: invalid fio JSON document starting here:");
}

TEST(Fio, LooksLikeFio) {
  EXPECT_TRUE(looks_like_fio(data_text("fio/error-devfull.json")));
  EXPECT_FALSE(looks_like_fio(data_text("seed/dd-with-patches.txt")));
  EXPECT_FALSE(looks_like_fio("{\"a\": 1}\n"));
}

}  // namespace
}  // namespace abvm
