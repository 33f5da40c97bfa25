// No production function longer than 100 lines (issue 9): past that, a function does several
// things and its steps deserve names. The stages come from ABVM_STAGES in the top CMakeLists.txt;
// every harness/<stage>/*.cpp is scanned. harness/tests/function_lengths.py lists the same
// functions (the same scan, kept in step) with any limit, for finding what to split next.
//
// The scan: comments and string and character literals are blanked; a brace block at namespace
// or class scope whose header has parentheses and no '=' outside them is a function, from the
// first line of its header to its closing brace. Initialisers (tables, `= [] { ... }()`) are
// data, not functions.
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

namespace {
namespace fs = std::filesystem;

const fs::path kSource = ABVM_SOURCE_DIR;
constexpr int kMaxLines = 100;

// Functions allowed to be longer, by "<stage>/<file>:<name>". Pure data tables only, and the
// temporary entries marked as such.
const std::set<std::string> kAllowed = {
    "config/keys.cpp:build_table",  // the one table of experiment keys: data, one add() per key
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The source with comments and literals replaced by spaces (newlines kept, so lines still count).
std::string blank_comments_and_literals(const std::string& src) {
  std::string out = src;
  const std::size_t n = src.size();
  auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < n; ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  std::size_t i = 0;
  while (i < n) {
    const char c = src[i];
    if (src.compare(i, 2, "//") == 0) {
      const std::size_t j = std::min(src.find('\n', i), n);
      blank(i, j);
      i = j;
    } else if (src.compare(i, 2, "/*") == 0) {
      const std::size_t e = src.find("*/", i + 2);
      const std::size_t j = e == std::string::npos ? n : e + 2;
      blank(i, j);
      i = j;
    } else if (c == 'R' && src.compare(i, 2, "R\"") == 0 && (i == 0 || !word_char(src[i - 1]))) {
      const std::size_t open = src.find('(', i + 2);
      const std::string close = ")" + src.substr(i + 2, open - (i + 2)) + "\"";
      const std::size_t e = src.find(close, open);
      const std::size_t j = e == std::string::npos ? n : e + close.size();
      blank(i + 2, j);
      i = j;
    } else if (c == '"' || (c == '\'' && !(i > 0 && std::isalnum(static_cast<unsigned char>(src[i - 1]))))) {
      std::size_t j = i + 1;
      while (j < n && src[j] != c && src[j] != '\n') j += src[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, n);
      if (j - i >= 2) blank(i + 1, j - 1);
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

std::string outside_parentheses(const std::string& s) {
  std::string out;
  int depth = 0;
  for (char c : s) {
    if (c == '(') ++depth;
    else if (c == ')') --depth;
    else if (depth == 0) out += c;
  }
  return out;
}

struct Function {
  std::string name;
  int line = 0;
  int lines = 0;
};

std::vector<Function> functions_in(const std::string& source) {
  static const std::regex operator_name(R"(operator\s*[^\sA-Za-z_]*)");  // operator=, operator==, ...
  static const std::regex assignment("=");
  static const std::regex scope_word(R"(\b(namespace|class|struct|union|enum|extern)\b)");
  const std::string text = blank_comments_and_literals(source);
  enum class Kind { scope, data, function, inner };
  struct Open {
    Kind kind;
    std::string header;
    int line;
  };
  std::vector<Open> stack;
  std::vector<Function> found;
  std::size_t start = 0;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (c != ';' && c != '{' && c != '}') continue;
    if (c == '{') {
      const std::string header = text.substr(start, i - start);
      Kind kind = Kind::function;
      if (std::any_of(stack.begin(), stack.end(), [](const Open& o) { return o.kind == Kind::function || o.kind == Kind::inner; })) {
        kind = Kind::inner;
      } else {
        const std::string outer = std::regex_replace(outside_parentheses(header), operator_name, "operator");
        if (std::regex_search(outer, assignment) || header.find('(') == std::string::npos)
          kind = std::regex_search(outer, scope_word) ? Kind::scope : Kind::data;
      }
      const std::size_t first = header.find_first_not_of(" \t\r\n");
      const int header_line = line - static_cast<int>(std::count(header.begin() + static_cast<std::ptrdiff_t>(
                                                                     first == std::string::npos ? header.size() : first),
                                                                 header.end(), '\n'));
      stack.push_back({kind, header, header_line});
    } else if (c == '}' && !stack.empty()) {
      const Open o = stack.back();
      stack.pop_back();
      if (o.kind == Kind::function) {
        std::string head = o.header.substr(0, o.header.find('('));
        std::replace_if(head.begin(), head.end(), [](char x) { return std::isspace(static_cast<unsigned char>(x)); }, ' ');
        while (!head.empty() && head.back() == ' ') head.pop_back();
        found.push_back({head.substr(head.rfind(' ') == std::string::npos ? 0 : head.rfind(' ') + 1), o.line,
                         line - o.line + 1});
      }
    }
    start = i + 1;
  }
  return found;
}

std::vector<std::string> stages() {
  const std::string cmake = read_all(kSource / "CMakeLists.txt");
  std::smatch m;
  if (!std::regex_search(cmake, m, std::regex(R"(set\(ABVM_STAGES([^)]*)\))"))) return {};
  std::istringstream in(m[1].str());
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

TEST(CoreFunctionLength, TheScanSeesFunctionsAndSkipsTables) {
  const std::string source =
      "namespace a {\n"
      "constexpr int kTable[] = {\n  1,\n  2,\n};\n"
      "struct S {\n  int f() const {\n    return 1;\n  }\n};\n"
      "bool operator==(const S& a, const S& b) {\n  return true;\n}\n"
      "// void commented() {\n"
      "int g(int x) {\n  const char* s = \"}{\";\n  if (x) {\n    return 2;\n  }\n  return 3;\n}\n"
      "}  // namespace a\n";
  const std::vector<Function> f = functions_in(source);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].name, "f");
  EXPECT_EQ(f[0].line, 7);
  EXPECT_EQ(f[0].lines, 3);
  EXPECT_EQ(f[1].name, "operator==");
  EXPECT_EQ(f[1].lines, 3);
  EXPECT_EQ(f[2].name, "g");
  EXPECT_EQ(f[2].line, 15);
  EXPECT_EQ(f[2].lines, 7);
}

TEST(CoreFunctionLength, NoProductionFunctionIsLongerThan100Lines) {
  const std::vector<std::string> all = stages();
  ASSERT_GE(all.size(), 10u) << "ABVM_STAGES not found in CMakeLists.txt";
  std::size_t scanned = 0;
  std::string too_long;
  for (const auto& stage : all) {
    const fs::path dir = kSource / "harness" / stage;
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.path().extension() == ".cpp") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      for (const Function& f : functions_in(read_all(file))) {
        ++scanned;
        const std::string rel = fs::relative(file, kSource / "harness").generic_string();
        const std::string id = rel + ":" + f.name;
        if (f.lines > kMaxLines && !kAllowed.contains(id)) {
          too_long += "  harness/" + rel + ":" + std::to_string(f.line) + ": " +
                      f.name + " has " + std::to_string(f.lines) + " lines\n";
        }
      }
    }
  }
  EXPECT_GT(scanned, 200u) << "the scan found too few functions to be trusted";
  EXPECT_TRUE(too_long.empty()) << "functions longer than " << kMaxLines
                                << " lines; split them into named steps:\n" << too_long;
}
