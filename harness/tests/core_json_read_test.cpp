// The one JSON reader (core/json_read.hpp): every error names the file (and line), the field's
// path and what was expected, and adds the document's remedy.
#include "core/json_read.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace abvm {
namespace {

struct Point {
  std::string name;
  std::optional<int> block;
  Side side = Side::a;
};

void read_json(const JsonField& f, Point& p) {
  p.name = f.required<std::string>("name");
  p.block = f.required<std::optional<int>>("block");
  p.side = f.value_or<Side>("side", Side::a);
}

struct Doc {
  std::vector<Point> points;
  std::map<std::string, std::string> tags;
  std::uint64_t seed = 0;
};

void read_json(const JsonField& f, Doc& d) {
  d.points = f.required<std::vector<Point>>("points");
  d.tags = f.value_or<std::map<std::string, std::string>>("tags", {});
  d.seed = f.required<std::uint64_t>("seed");
}

// The error of reading `text` as a Doc from plan.json, or "" when it reads.
std::string error_of(const std::string& text, std::size_t line = 0, std::string remedy = "") {
  try {
    const JsonDocument doc(text, JsonSource{.file = "plan.json", .line = line, .remedy = std::move(remedy)});
    (void)doc.root().as<Doc>();
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

TEST(CoreJsonRead, ReadsNestedStructsListsMapsOptionalsAndWords) {
  const JsonDocument doc(R"({"points":[{"name":"p","block":null},{"name":"q","block":3,"side":"B"}],)"
                         R"("tags":{"k":"v"},"seed":18446744073709551615})",
                         JsonSource{.file = "plan.json"});
  const Doc d = doc.root().as<Doc>();
  ASSERT_EQ(d.points.size(), 2u);
  EXPECT_EQ(d.points[0].block, std::nullopt);
  EXPECT_EQ(d.points[1].block, 3);
  EXPECT_EQ(d.points[1].side, Side::b);
  EXPECT_EQ(d.tags.at("k"), "v");
  EXPECT_EQ(d.seed, 18446744073709551615u);
}

TEST(CoreJsonRead, AWrongTypeNamesTheFileTheFieldsPathWhatWasExpectedAndWhatWasFound) {
  EXPECT_EQ(error_of(R"({"points":[{"name":"p","block":1},{"name":"q","block":2,"side":5}],"seed":1})"),
            R"(plan.json: field "points[1].side" must be "A" or "B", not 5)");
  EXPECT_EQ(error_of(R"({"points":[{"name":7,"block":1}],"seed":1})"),
            R"(plan.json: field "points[0].name" must be a string, not 7)");
  EXPECT_EQ(error_of(R"({"points":[],"seed":"1"})"), R"(plan.json: field "seed" must be an integer >= 0, not "1")");
  EXPECT_EQ(error_of(R"({"points":[],"seed":-1})"), R"(plan.json: field "seed" must be an integer >= 0, not -1)");
  EXPECT_EQ(error_of(R"({"points":[],"seed":1.5})"), R"(plan.json: field "seed" must be an integer >= 0, not 1.5)");
  EXPECT_EQ(error_of(R"({"points":[{"name":"p","block":4294967296}],"seed":1})"),
            R"(plan.json: field "points[0].block" must be an integer up to 2147483647, not 4294967296)");
  EXPECT_EQ(error_of(R"({"points":{},"seed":1})"), R"(plan.json: field "points" must be a list, not {})");
  EXPECT_EQ(error_of(R"({"points":[],"tags":{"k":1},"seed":1})"), R"(plan.json: field "tags.k" must be a string, not 1)");
}

TEST(CoreJsonRead, AMissingFieldIsNamedWithWhatItMustBe) {
  EXPECT_EQ(error_of(R"({"points":[{"block":1}],"seed":1})"), R"(plan.json: field "points[0].name" is missing (a string))");
  EXPECT_EQ(error_of(R"({"points":[{"name":"p"}],"seed":1})"),
            R"(plan.json: field "points[0].block" is missing (an integer or null))");
  EXPECT_EQ(error_of(R"({"seed":1})"), R"(plan.json: field "points" is missing (a list))");
}

TEST(CoreJsonRead, TheRootNotJsonAndTheLineOfALineFileAndTheRemedy) {
  EXPECT_EQ(error_of("[1]"), "plan.json: the file must be an object, not [1]");
  EXPECT_EQ(error_of("5", 4), "plan.json:4: the line must be an object, not 5");
  EXPECT_EQ(error_of("{", 0, "start a new run"),
            "plan.json: not JSON (parse error at line 1, column 2: syntax error while parsing object key - unexpected "
            "end of input; expected string literal); start a new run");
  EXPECT_EQ(error_of("1e999"), "plan.json: not JSON (number overflow parsing '1e999')");
  EXPECT_EQ(error_of(R"({"seed":1,"points":[{"name":"p","block":1,"side":"C"}]})", 7, "the directory is damaged"),
            R"(plan.json:7: field "points[0].side" must be "A" or "B", not "C"; the directory is damaged)");
}

TEST(CoreJsonRead, WhatWasFoundIsCutShortAndWellFormed) {
  const std::string long_name(100, 'x');
  EXPECT_EQ(error_of(R"({"points":[{"name":"p","block":")" + long_name + R"("}],"seed":1})"),
            R"(plan.json: field "points[0].block" must be an integer or null, not ")" + std::string(59, 'x') + "...");
  // The parser quotes the bytes it stopped at; the message stays UTF-8.
  EXPECT_EQ(error_of("{\"points\":[],\"seed\":\"\xff\"}"),
            "plan.json: not JSON (parse error at line 1, column 22: syntax error while parsing value - invalid string: "
            "ill-formed UTF-8 byte; last read: '\"\xef\xbf\xbd')");
}

TEST(CoreJsonRead, ChecksOfTheReaderNameTheField) {
  const JsonDocument doc(R"({"a":{"b":-2}})", JsonSource{.file = "f.json", .line = 2});
  const JsonField b = doc.root().member("a").member("b");
  EXPECT_EQ(b.path(), "a.b");
  try {
    b.invalid("must be >= 0 (a count)");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), R"(f.json:2: field "a.b" must be >= 0 (a count))");
  }
  try {
    b.expected("between 0 and 9");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), R"(f.json:2: field "a.b" must be between 0 and 9, not -2)");
  }
}

}  // namespace
}  // namespace abvm
