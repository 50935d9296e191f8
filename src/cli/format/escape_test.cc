// Issue 17: job names were printed raw, so escape sequences and forged lines reached an
// operator's terminal through squeue and scontrol. Every report prints what users wrote with
// control characters escaped (EscapeControl, applied by JStr).
#include <gtest/gtest.h>

#include "cli/format/field_format.h"
#include "cli/format/format_test_data.h"
#include "cli/format/sacct.h"
#include "cli/format/scontrol.h"
#include "cli/format/sinfo.h"
#include "cli/format/squeue.h"

namespace lockstep::cli {
namespace {

// A name that clears the screen and forges a line of squeue output.
const std::string kHostileName = "x\x1b[2J\n  9999 gpu fake root R";
const std::string kEscapedName = "x\\x1b[2J\\n  9999 gpu fake root R";

bool HasControl(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9f)
      return true;
  }
  return false;
}

std::size_t Lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

nlohmann::json HostileJobs() {
  nlohmann::json jobs = testdata::Jobs();
  jobs[0]["name"] = kHostileName;
  jobs[0]["account"] = "acct\r";
  jobs[0]["work_dir"] = "/home/alice\x07";
  return jobs;
}

TEST(EscapeControl, EscapesC0DelAndC1AndKeepsUtf8) {
  EXPECT_EQ(EscapeControl("a\nb\tc\rd\x1b[31m\x7f"), "a\\nb\\tc\\rd\\x1b[31m\\x7f");
  EXPECT_EQ(EscapeControl("csi\xc2\x9b"
                          "2J"),
            "csi\\xc2\\x9b2J");
  EXPECT_EQ(EscapeControl("r\xc3\xa9sum\xc3\xa9 \xe2\x9c\x93"),
            "r\xc3\xa9sum\xc3\xa9 \xe2\x9c\x93");
  EXPECT_EQ(EscapeControl(std::string("nul\0end", 7)), "nul\\x00end");
  EXPECT_EQ(EscapeControl("plain-name_1.sh"), "plain-name_1.sh");
}

TEST(EscapeControl, RegressionSqueueShowsAHostileNameEscapedOnOneLine) {
  SqueueOptions options;
  options.now = testdata::kNow;
  options.format = "%i %j";
  Result<std::string> out = FormatSqueue(HostileJobs(), options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FALSE(HasControl(*out)) << *out;
  EXPECT_EQ(Lines(*out), 1 + testdata::Jobs().size()) << *out;  // header + one line a job
  EXPECT_NE(out->find("1234 " + kEscapedName), std::string::npos) << *out;
}

TEST(EscapeControl, RegressionScontrolShowJobEscapesNameAndPaths) {
  nlohmann::json jobs = HostileJobs();
  Result<std::string> clean = FormatScontrolShowJob(testdata::Jobs()[0], {});
  Result<std::string> out = FormatScontrolShowJob(jobs[0], {});
  ASSERT_TRUE(out.ok() && clean.ok());
  EXPECT_FALSE(HasControl(*out)) << *out;
  EXPECT_EQ(Lines(*out), Lines(*clean)) << *out;
  EXPECT_NE(out->find("JobName=" + kEscapedName), std::string::npos) << *out;
  EXPECT_NE(out->find("/home/alice\\x07"), std::string::npos) << *out;
}

TEST(EscapeControl, SacctEscapesNamesAndAccounts) {
  Result<std::string> out = FormatSacct(HostileJobs(), {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FALSE(HasControl(*out)) << *out;
  SacctOptions parsable;
  parsable.parsable = SacctParsable::kNoTrailing;
  parsable.format = "jobid,jobname,account";
  out = FormatSacct(HostileJobs(), parsable);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_NE(out->find("1234|" + kEscapedName + "|acct\\r"), std::string::npos) << *out;
}

TEST(EscapeControl, SinfoReasonsAndScontrolShowNodeAreEscaped) {
  nlohmann::json nodes = nlohmann::json::array({testdata::Node("adev0", "drain", "debug")});
  nodes[0]["reason"] = "disk\x1b]0;owned\x07 bad\nadev9 idle";
  SinfoOptions options;
  options.list_reasons = true;
  Result<std::string> out = FormatSinfo(testdata::Partitions(), nodes, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FALSE(HasControl(*out)) << *out;
  EXPECT_NE(out->find("\ndisk\\x1b]0;owned\\x07 Unknown"), std::string::npos)  // cut to 20
      << *out;
  Result<std::string> node = FormatScontrolShowNode(nodes, {});
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_FALSE(HasControl(*node)) << *node;
  EXPECT_NE(node->find("Reason=disk\\x1b]0;owned\\x07 bad\\nadev9 idle"), std::string::npos)
      << *node;
}

}  // namespace
}  // namespace lockstep::cli
