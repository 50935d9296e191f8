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

// Issue 27: a name with U+202E RIGHT-TO-LEFT OVERRIDE reached the terminal raw and showed the
// rest of the line reversed ("job-\u202eexe.hsab" reads "job-bash.exe"; a column after it can
// be made to read as anything). Shown as an escape, as the C0 controls are.
TEST(EscapeControl, EscapesBidirectionalControlsAndSeparators) {
  EXPECT_EQ(EscapeControl("job-\xe2\x80\xae" "exe.hsab"), "job-\\u202eexe.hsab");
  EXPECT_EQ(EscapeControl("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad"),
            "\\u202a\\u202b\\u202c\\u202d");
  EXPECT_EQ(EscapeControl("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9"),
            "\\u2066\\u2067\\u2068\\u2069");
  EXPECT_EQ(EscapeControl("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c"), "\\u200e\\u200f\\u061c");
  EXPECT_EQ(EscapeControl("a\xe2\x80\xa8" "b\xe2\x80\xa9"), "a\\u2028b\\u2029");
  // Their neighbours are text: an en dash, a bullet, a word joiner, Arabic letters.
  for (const char* kept : {"\xe2\x80\x93", "\xe2\x80\xa2", "\xe2\x81\xa0", "\xd8\xa8\xd9\x8a"})
    EXPECT_EQ(EscapeControl(kept), kept);
  EXPECT_EQ(EscapeControl("cut\xe2\x80"), "cut\xe2\x80");  // a truncated sequence is kept
}

bool HasBidiOverride(const std::string& text) {
  return text.find("\xe2\x80\xae") != std::string::npos ||
         text.find("\xe2\x81\xa7") != std::string::npos;
}

TEST(EscapeControl, RegressionSqueueScontrolAndSacctEscapeABidiOverride) {
  nlohmann::json jobs = testdata::Jobs();
  jobs[0]["name"] = "job-\xe2\x80\xae" "exe.hsab";
  jobs[0]["comment"] = "\xe2\x81\xa7" "fake\xe2\x81\xa9";
  SqueueOptions squeue;
  squeue.now = testdata::kNow;
  squeue.format = "%i %j %k";
  Result<std::string> q = FormatSqueue(jobs, squeue);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_FALSE(HasBidiOverride(*q)) << *q;
  EXPECT_NE(q->find("1234 job-\\u202eexe.hsab \\u2067fake\\u2069"), std::string::npos) << *q;
  Result<std::string> show = FormatScontrolShowJob(jobs[0], {});
  ASSERT_TRUE(show.ok()) << show.status().ToString();
  EXPECT_FALSE(HasBidiOverride(*show)) << *show;
  EXPECT_NE(show->find("JobName=job-\\u202eexe.hsab"), std::string::npos) << *show;
  SacctOptions sacct;
  sacct.parsable = SacctParsable::kNoTrailing;
  sacct.format = "jobid,jobname,comment";
  Result<std::string> acct = FormatSacct(jobs, sacct);
  ASSERT_TRUE(acct.ok()) << acct.status().ToString();
  EXPECT_FALSE(HasBidiOverride(*acct)) << *acct;
  EXPECT_NE(acct->find("1234|job-\\u202eexe.hsab|\\u2067fake\\u2069"), std::string::npos)
      << *acct;
}

}  // namespace
}  // namespace lockstep::cli
