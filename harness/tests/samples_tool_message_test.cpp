// Tests of samples/tool_message.hpp: a failed tool's own words, as a run's detail quotes them.
#include "samples/tool_message.hpp"

#include <gtest/gtest.h>

#include <string>

namespace abvm {
namespace {

TEST(ToolMessage, DdsErrorLineIsQuotedAsItIs) {
  EXPECT_EQ(tool_message("dd: failed to open '/dev/null': Invalid argument\n", "dd"),
            "dd: failed to open '/dev/null': Invalid argument");
  // Its statistics after a write error are not its message.
  EXPECT_EQ(tool_message("dd: error writing '/dev/vda': No space left on device\n3+0 records in\n2+0 records out\n"
                         "2097152 bytes (2.1 MB, 2.0 MiB) copied, 0.01 s, 210 MB/s\n",
                         "dd"),
            "dd: error writing '/dev/vda': No space left on device");
}

// The agent runs each tool by its path, and GNU tools name themselves by argv[0].
TEST(ToolMessage, AToolNamedByItsPathIsQuotedWithIt) {
  EXPECT_EQ(tool_message("/usr/bin/dd: invalid input flag: 'no-such-flag'\nTry '/usr/bin/dd --help' for more "
                         "information.\n",
                         "dd"),
            "/usr/bin/dd: invalid input flag: 'no-such-flag'");
  EXPECT_EQ(tool_message("/usr/bin/fio: unrecognized option '--no_such_fio_option=1'\n", "fio"),
            "/usr/bin/fio: unrecognized option '--no_such_fio_option=1'");
  EXPECT_EQ(tool_message("/usr/bin/add: no\nbin/dd: relative\n", "dd"), "");
}

TEST(ToolMessage, FiosErrorLinesBeforeItsJsonAreJoined) {
  const std::string out = "fio: pid=123, err=22/file:filesetup.c:805, func=open(/dev/null), error=Invalid argument\n"
                          "{\n  \"fio version\" : \"fio-3.33\",\n  \"jobs\" : []\n}\n"
                          "fio: file hash not empty on exit\n";
  EXPECT_EQ(tool_message(out, "fio"),
            "fio: pid=123, err=22/file:filesetup.c:805, func=open(/dev/null), error=Invalid argument / fio: file hash "
            "not empty on exit");
  EXPECT_EQ(tool_message(out, "dd"), "") << "another tool's lines are not quoted";
}

TEST(ToolMessage, NothingWhenTheToolSaidNothingOfItsOwn) {
  EXPECT_EQ(tool_message("", "dd"), "");
  EXPECT_EQ(tool_message("dd:\nddx: no\n  dd: indented\nsh: dd: not found\n", "dd"), "");
}

// The guest's output is an adversary: at most kToolMessageLines lines of kToolMessageLineBytes, no
// control characters, well-formed UTF-8.
TEST(ToolMessage, IsCappedAndClean) {
  std::string out;
  for (int i = 0; i < 10; ++i) out += "dd: line " + std::to_string(i) + "\n";
  EXPECT_EQ(tool_message(out, "dd"), "dd: line 0 / dd: line 1 / dd: line 2");
  const std::string long_line = "dd: " + std::string(1000, 'x') + "\n";
  EXPECT_EQ(tool_message(long_line, "dd").size(), kToolMessageLineBytes);
  EXPECT_EQ(tool_message("dd: a\x1b[31mb\r\x7f\xff\n", "dd"), "dd: a[31mb\xef\xbf\xbd");
  // Linear: a huge output with no line of the tool's costs one pass.
  const std::string huge(8 << 20, 'y');
  EXPECT_EQ(tool_message(huge, "dd"), "");
}

}  // namespace
}  // namespace abvm
