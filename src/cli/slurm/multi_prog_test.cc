#include "cli/slurm/multi_prog.h"

#include <gtest/gtest.h>

namespace lockstep::cli {
namespace {

TEST(MultiProg, EachRankItsLineQuoted) {
  Result<std::vector<std::string>> cmd = MultiProgCommand(
      "# comment\n0 echo master\n1-2 echo 'worker %t' off=%o\n* echo rest%t\n", "p.conf");
  ASSERT_TRUE(cmd.ok()) << cmd.status().message();
  ASSERT_EQ(cmd->size(), 3u);
  EXPECT_EQ((*cmd)[0], "/bin/sh");
  EXPECT_EQ((*cmd)[2],
            "case \"$SLURM_PROCID\" in\n"
            "  0) exec 'echo' 'master' ;;\n"
            "  1) exec 'echo' 'worker '1 'off='0 ;;\n"
            "  2) exec 'echo' 'worker '2 'off='1 ;;\n"
            "  *) exec 'echo' 'rest'\"$SLURM_PROCID\" ;;\n"
            "esac");
}

TEST(MultiProg, QuotesWhatTheShellWouldReadAsCode) {
  Result<std::vector<std::string>> cmd = MultiProgCommand("0 echo \"$(rm -rf x)'\"\n", "p");
  ASSERT_TRUE(cmd.ok());
  EXPECT_NE((*cmd)[2].find("'$(rm -rf x)'\\'''"), std::string::npos) << (*cmd)[2];
}

TEST(MultiProg, ErrorsNameTheLine) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"0 a\n1-x b\n", "p line 2: '1-x' is not a task range"},
      {"0 a\n0 b\n", "p line 2: task 0 has a line already"},
      {"3\n", "p line 1: no program for tasks 3"},
      {"0 'a\n", "p line 1: an unterminated quote"},
      {"# nothing\n", "p: no program in the --multi-prog file"},
  };
  for (const Case& c : cases) {
    Result<std::vector<std::string>> cmd = MultiProgCommand(c.text, "p");
    ASSERT_FALSE(cmd.ok()) << c.text;
    EXPECT_EQ(cmd.status().message(), c.error);
  }
}

}  // namespace
}  // namespace lockstep::cli
