// harness/ARCHITECTURE.md stays true and short (issue 29): every test it names (`Suite.Test` or
// `Suite.*` in backquotes) is one the build registers, every file or folder it names exists, every
// README section it links to exists, every section of it that the code refers to exists, every grep
// it names finds what it says, and no paragraph, list item or table row is longer than 90 words.
// What a claim says is checked by the test or command it names; this test checks that those names
// still point at something.
#include <gtest/gtest.h>

#include <algorithm>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/process.hpp"

namespace {
namespace fs = std::filesystem;

const fs::path kSource = ABVM_SOURCE_DIR;
constexpr std::size_t kMaxWords = 90;

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string doc() { return read_all(kSource / "harness" / "ARCHITECTURE.md"); }

// The text of every `...` span outside code blocks (a span may go on over a line's end).
std::vector<std::string> quoted(const std::string& text) {
  std::string prose;
  std::istringstream in(text);
  bool fence = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("```")) fence = !fence;
    else if (!fence) prose += line + "\n";
  }
  std::vector<std::string> out;
  static const std::regex span("`([^`]+)`");
  for (std::sregex_iterator it(prose.begin(), prose.end(), span), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

// Paragraphs, list items and table rows, outside code blocks and headings.
std::vector<std::string> paragraphs(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) out.push_back(current);
    current.clear();
  };
  static const std::regex item(R"(^(\d+\.|-) )");
  std::istringstream in(text);
  bool fence = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("```")) {
      fence = !fence;
      flush();
      continue;
    }
    if (fence) continue;
    if (line.empty() || line.starts_with("#") || line.starts_with("|") || std::regex_search(line, item)) flush();
    if (line.starts_with("|")) {
      out.push_back(line);
    } else if (!line.empty() && !line.starts_with("#")) {
      current += line + "\n";
    }
  }
  flush();
  return out;
}

std::size_t words(const std::string& text) {
  std::istringstream in(text);
  std::size_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

// GitHub's anchor of a heading: lower case, spaces to hyphens, other punctuation dropped.
std::string anchor(const std::string& heading) {
  std::string out;
  for (const char c : heading) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (c == ' ' || c == '-') out += '-';
    else if (c == '_') out += c;
  }
  return out;
}

std::set<std::string> heading_anchors(const std::string& text) {
  std::set<std::string> out;
  static const std::regex heading(R"(^#+ (.*)$)");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, heading)) out.insert(anchor(m[1]));
  }
  return out;
}

// The stages of the top CMakeLists.txt's ABVM_STAGES.
std::vector<std::string> stages() {
  const std::string cmake = read_all(kSource / "CMakeLists.txt");
  static const std::regex list(R"(set\(ABVM_STAGES ([a-z ]+)\))");
  std::smatch m;
  if (!std::regex_search(cmake, m, list)) return {};
  std::istringstream in(m[1].str());
  std::vector<std::string> out;
  for (std::string stage; in >> stage;) out.push_back(stage);
  return out;
}

// A test file the build makes a test binary of: harness/tests/<stage>_<name>_test.cpp
// (harness/tests/CMakeLists.txt globs these, stage by stage).
bool registered(const fs::path& file, const std::vector<std::string>& stages) {
  const std::string name = file.filename().string();
  return name.ends_with("_test.cpp") && std::any_of(stages.begin(), stages.end(), [&](const std::string& stage) {
           return name.starts_with(stage + "_");
         });
}

// "Suite.Name" and "Suite.*" of every TEST, TEST_F and TEST_P in the test files the build registers.
std::set<std::string> test_names() {
  std::set<std::string> out;
  static const std::regex test(R"(\bTEST(?:_F|_P)?\(\s*(\w+)\s*,\s*(\w+)\s*\))");
  const std::vector<std::string> known_stages = stages();
  for (const auto& entry : fs::directory_iterator(kSource / "harness" / "tests")) {
    if (!registered(entry.path(), known_stages)) continue;
    const std::string text = read_all(entry.path());
    for (std::sregex_iterator it(text.begin(), text.end(), test), end; it != end; ++it) {
      out.insert((*it)[1].str() + "." + (*it)[2].str());
      out.insert((*it)[1].str() + ".*");
    }
  }
  return out;
}

// A path as the document writes it: from the repository's root, from harness/, or a stage's file
// without its extension ("guest/records").
bool names_something(const std::string& path) {
  for (const fs::path& base : {kSource, kSource / "harness"}) {
    if (fs::exists(base / path)) return true;
    for (const char* ext : {".hpp", ".cpp"}) {
      if (fs::exists(base / (path + ext))) return true;
    }
  }
  return false;
}

}  // namespace

TEST(CoreArchitectureDoc, EveryNamedTestExists) {
  const std::set<std::string> known = test_names();
  static const std::regex test_name(R"(^[A-Z][A-Za-z0-9]*\.([A-Z][A-Za-z0-9_]*|\*)$)");
  int named = 0;
  for (const std::string& q : quoted(doc())) {
    if (!std::regex_match(q, test_name)) continue;
    ++named;
    EXPECT_TRUE(known.contains(q)) << q << " is named in harness/ARCHITECTURE.md but is no test the build registers "
                                        "(harness/tests/<stage>_*_test.cpp)";
  }
  EXPECT_GT(named, 20);
}

TEST(CoreArchitectureDoc, EveryNamedFileExists) {
  int named = 0;
  for (const std::string& q : quoted(doc())) {
    // Paths only: no commands (spaces), no placeholders, no globs, no URIs.
    if (q.find('/') == std::string::npos || q.find_first_of(" \n<*{:") != std::string::npos) continue;
    ++named;
    EXPECT_TRUE(names_something(q)) << q << " is named in harness/ARCHITECTURE.md but is not in the repository";
  }
  EXPECT_GT(named, 40);
}

TEST(CoreArchitectureDoc, EveryLinkedSectionExists) {
  const std::string text = doc();
  const std::set<std::string> readme = heading_anchors(read_all(kSource / "README.md"));
  static const std::regex link(R"(\]\(\.\./README\.md#([^)]+)\))");
  int links = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), link), end; it != end; ++it) {
    ++links;
    EXPECT_TRUE(readme.contains((*it)[1])) << "README.md has no section #" << (*it)[1];
  }
  EXPECT_GT(links, 3);
  // The sections the code sends its readers to: a heading's name quoted after the file's name and a
  // comma, as config/design.hpp and config/workload.hpp do.
  const std::set<std::string> own = heading_anchors(text);
  static const std::regex reference("ARCHITECTURE\\.md`?, \"?([A-Z][A-Za-z ]*[a-z])");
  int references = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "harness")) {
    const auto ext = entry.path().extension();
    if (ext != ".hpp" && ext != ".cpp") continue;
    const std::string source = read_all(entry.path());
    for (std::sregex_iterator it(source.begin(), source.end(), reference), end; it != end; ++it) {
      ++references;
      EXPECT_TRUE(own.contains(anchor((*it)[1])))
          << entry.path().filename().string() << " refers to the section \"" << (*it)[1]
          << "\" of harness/ARCHITECTURE.md, which has none of that name";
    }
  }
  EXPECT_GT(references, 1);
}

TEST(CoreArchitectureDoc, NoParagraphIsLongerThan90Words) {
  for (const std::string& p : paragraphs(doc())) {
    EXPECT_LE(words(p), kMaxWords) << "a paragraph of " << words(p) << " words in harness/ARCHITECTURE.md:\n" << p;
  }
}

namespace {

// A grep command as the document writes it, as an argument vector (no shell): words split at spaces,
// a "double-quoted" word kept whole, one {a,b} in a word made a word per choice, as bash would.
std::vector<std::string> grep_argv(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false, any = false;
  for (const char c : command) {
    if (c == '"') { quoted = !quoted; any = true; continue; }
    if (c == ' ' && !quoted) {
      if (any) words.push_back(word);
      word.clear();
      any = false;
      continue;
    }
    word += c;
    any = true;
  }
  if (any) words.push_back(word);
  std::vector<std::string> argv;
  static const std::regex brace(R"(^(.*)\{([^{}]*)\}(.*)$)");
  for (const std::string& w : words) {
    std::smatch m;
    if (!std::regex_match(w, m, brace)) { argv.push_back(w); continue; }
    std::istringstream choices(m[2].str());
    for (std::string choice; std::getline(choices, choice, ',');) argv.push_back(m[1].str() + choice + m[3].str());
  }
  return argv;
}

}  // namespace

TEST(CoreArchitectureDoc, AGrepIsSplitAsBashWouldSplitIt) {
  EXPECT_EQ(grep_argv(R"(grep -c "a\|b c" harness/cli/{x,y}.cpp)"),
            (std::vector<std::string>{"grep", "-c", "a\\|b c", "harness/cli/x.cpp", "harness/cli/y.cpp"}));
}

// A grep it names, run from the repository's root, prints what it says: lines (exit 0), or for a
// count (`grep -c`, which it names only as "counts 0 in each") a 0 for every file.
TEST(CoreArchitectureDoc, EveryNamedGrepFindsWhatItSays) {
  int greps = 0;
  for (std::string q : quoted(doc())) {
    if (!q.starts_with("grep ")) continue;
    std::replace(q.begin(), q.end(), '\n', ' ');
    ++greps;
    const abvm::ProcessResult r = abvm::run_process(grep_argv(q), {.cwd = kSource});
    if (q.starts_with("grep -c ")) {
      static const std::regex zero(R"(^[^\n]*:0$)");
      std::istringstream lines(r.out);
      int files = 0;
      for (std::string line; std::getline(lines, line); ++files) {
        EXPECT_TRUE(std::regex_match(line, zero)) << q << " in harness/ARCHITECTURE.md: " << line;
      }
      EXPECT_GT(files, 0) << q << ": " << r.err;
    } else {
      EXPECT_EQ(r.exit_code, 0) << q << " in harness/ARCHITECTURE.md finds nothing: " << r.err;
      EXPECT_NE(r.out, "") << q;
    }
  }
  EXPECT_GT(greps, 8);
}
