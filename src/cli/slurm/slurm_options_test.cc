// The getopt_long table parser against what Slurm's commands print and return.
#include "cli/slurm/slurm_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lockstep::cli {
namespace {

struct Seen {
  std::vector<std::string> events;
};

std::vector<SlurmOption> Table(Seen& s) {
  auto record = [&s](const char* name) {
    return [&s, name](const std::string& v) {
      s.events.push_back(std::string(name) + "=" + v);
      return Status::Ok();
    };
  };
  return {
      {"noheader", 'h', OptArg::kNone, record("noheader"), "no headers"},
      {"jobs", 'j', OptArg::kRequired, record("jobs"), "jobs", "job(s)"},
      {"start", 0, OptArg::kNone, record("start"), "start times"},
      {"steps", 's', OptArg::kOptional, record("steps"), "steps"},
      {"states", 't', OptArg::kRequired, record("states"), "states"},
      {"bad", 0, OptArg::kRequired,
       [](const std::string& v) { return InvalidArgument("Invalid bad: " + v); }, nullptr},
  };
}

struct Case {
  std::vector<std::string> args;
  std::vector<std::string> events;
  std::vector<std::string> operands;
  int exit_code;  // -1: parsing goes on
  std::string stderr_text;
};

ParsedCommandLine ParseWith(std::vector<std::string> args, Seen& seen, std::string& err) {
  args.insert(args.begin(), "/usr/local/bin/squeue");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  testing::internal::CaptureStdout();
  ParsedCommandLine p =
      ParseSlurmCommandLine("squeue", static_cast<int>(argv.size()), argv.data(), Table(seen));
  testing::internal::GetCapturedStdout();
  err = testing::internal::GetCapturedStderr();
  return p;
}

TEST(SlurmOptions, ReadsCommandLinesAsSlurmDoes) {
  const Case cases[] = {
      {{"-h", "-j", "42"}, {"noheader=", "jobs=42"}, {}, -1, ""},
      {{"-hj42"}, {"noheader=", "jobs=42"}, {}, -1, ""},
      {{"--noh", "--jobs=7"}, {"noheader=", "jobs=7"}, {}, -1, ""},  // unique prefixes
      {{"--star"}, {"start="}, {}, -1, ""},
      {{"--steps"}, {"steps="}, {}, -1, ""},
      {{"--steps=3"}, {"steps=3"}, {}, -1, ""},
      {{"x", "-h", "y"}, {"noheader="}, {"x", "y"}, -1, ""},  // operands anywhere
      {{"--bogus"}, {}, {}, 1,
       "squeue: unrecognized option '--bogus'\nTry \"squeue --help\" for more information\n"},
      {{"--st"}, {}, {}, 1,
       "squeue: option '--st' is ambiguous; possibilities: '--start' '--steps' '--states'\n"
       "Try \"squeue --help\" for more information\n"},
      {{"-j"}, {}, {}, 1,
       "squeue: option requires an argument -- 'j'\nTry \"squeue --help\" for more "
       "information\n"},
      {{"--bad=x"}, {}, {}, 1, "squeue: error: Invalid bad: x\n"},
      {{"--help"}, {}, {}, 0, ""},
      {{"--usage"}, {}, {}, 0, ""},
  };
  for (const Case& c : cases) {
    Seen seen;
    std::string err;
    ParsedCommandLine p = ParseWith(c.args, seen, err);
    std::string label = ::testing::PrintToString(c.args);
    EXPECT_EQ(seen.events, c.events) << label;
    EXPECT_EQ(p.operands, c.operands) << label;
    EXPECT_EQ(p.exit_code.value_or(-1), c.exit_code) << label;
    EXPECT_EQ(err, c.stderr_text) << label;
  }
}

TEST(SlurmOptions, HelpListsDocumentedOptionsOnly) {
  Seen seen;
  std::string help = SlurmHelpText("squeue", Table(seen), "[OPTIONS]");
  EXPECT_EQ(help.rfind("Usage: squeue [OPTIONS]\n", 0), 0u);
  EXPECT_NE(help.find("  -j, --jobs=job(s)"), std::string::npos);
  EXPECT_NE(help.find("      --start"), std::string::npos);
  EXPECT_EQ(help.find("--bad"), std::string::npos);
  std::string usage = SlurmUsageText("squeue", Table(seen), "[OPTIONS]");
  EXPECT_NE(usage.find("[-j job(s)]"), std::string::npos);
  EXPECT_NE(usage.find("[-h]"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::cli
