#include <gtest/gtest.h>

#include <string>

#include "trace/trace.h"
#include "trace/trace_test_util.h"

namespace lockstep::trace {
namespace {

using testing::ScratchDir;

constexpr std::string_view kHeader =
    "submit,user,account,partition,nodes,gpus_per_node,run_time,time_limit\n";

Trace ParseOk(std::string_view text) {
  Result<Trace> r = ParseLockstepCsv(text, "jobs.csv");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : Trace{};
}

std::string ParseError(std::string_view body) {
  Result<Trace> r = ParseLockstepCsv(std::string(kHeader) + std::string(body), "jobs.csv");
  EXPECT_FALSE(r.ok()) << body;
  return r.ok() ? "" : r.status().message();
}

TEST(LockstepCsvTest, MapsFields) {
  Trace t = ParseOk(std::string(kHeader) +
                    "0,alice,ml,gpu,4,8,3600,7200\n"
                    "60,bob,,,1,0,1:30:00,2-00:00:00\n");
  ASSERT_EQ(t.jobs.size(), 2u);
  const TraceJob& a = t.jobs[0];
  EXPECT_EQ(a.id, 1);
  EXPECT_EQ(a.submit, 0);
  EXPECT_EQ(a.user, "alice");
  EXPECT_EQ(a.account, "ml");
  EXPECT_EQ(a.partition, "gpu");
  EXPECT_EQ(a.nodes, 4);
  EXPECT_EQ(a.gpus_per_node, 8);
  EXPECT_EQ(a.run_time, 3600);  // a bare number is seconds
  EXPECT_EQ(a.time_limit, 7200);
  const TraceJob& b = t.jobs[1];
  EXPECT_EQ(b.id, 2);
  EXPECT_EQ(b.account, "");
  EXPECT_EQ(b.partition, "");
  EXPECT_EQ(b.gpus_per_node, 0);
  EXPECT_EQ(b.run_time, 5400);
  EXPECT_EQ(b.time_limit, 2 * 86400);
  EXPECT_EQ(t.skipped, 0);
  EXPECT_TRUE(t.nodes.empty());
}

TEST(LockstepCsvTest, TimeLimitUnknownOrUnlimited) {
  Trace t = ParseOk(std::string(kHeader) +
                    "0,u,a,p,1,1,10,\n"
                    "0,u,a,p,1,1,10,-1\n"
                    "0,u,a,p,1,1,10,UNLIMITED\n"
                    "0,u,a,p,1,1,0,0:30\n");
  ASSERT_EQ(t.jobs.size(), 4u);
  EXPECT_EQ(t.jobs[0].time_limit, -1);
  EXPECT_EQ(t.jobs[1].time_limit, -1);
  EXPECT_EQ(t.jobs[2].time_limit, kUnlimited);
  EXPECT_EQ(t.jobs[3].time_limit, 30);  // Slurm's minutes:seconds
  EXPECT_EQ(t.jobs[3].run_time, 0);
}

TEST(LockstepCsvTest, CommentsBlankLinesCrLfAndOrder) {
  Trace t = ParseOk("# a workload\n\n" + std::string(kHeader) +
                    "# late jobs first\r\n"
                    "100,u,a,p,1,1,10,20\r\n"
                    "\n"
                    "50,u,a,p,2,1,10,20\r\n"
                    "100,u,a,p,3,1,10,20\n");
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.jobs[0].nodes, 2);  // sorted by submit, stably
  EXPECT_EQ(t.jobs[0].id, 2);
  EXPECT_EQ(t.jobs[1].id, 1);
  EXPECT_EQ(t.jobs[2].id, 3);
}

TEST(LockstepCsvTest, BadHeader) {
  Result<Trace> r = ParseLockstepCsv("# c\nsubmit,user,nodes\n0,u,1\n", "jobs.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "jobs.csv:2: expected the header "
            "'submit,user,account,partition,nodes,gpus_per_node,run_time,time_limit', found "
            "'submit,user,nodes'");
  Result<Trace> empty = ParseLockstepCsv("", "jobs.csv");
  EXPECT_EQ(empty.status().message(), "jobs.csv: no header line (the file is empty)");
}

TEST(LockstepCsvTest, BadFieldCount) {
  EXPECT_EQ(ParseError("0,u,a,p,1,1,10,20\n0,u,a,p,1,1,10\n"),
            "jobs.csv:3: expected 8 fields, found 7");
}

TEST(LockstepCsvTest, BadNumbersNameColumnAndLine) {
  EXPECT_EQ(ParseError("0,u,a,p,x,1,10,20\n"), "jobs.csv:2: column 'nodes': 'x' is not an integer");
  EXPECT_EQ(ParseError("0,u,a,p,0,1,10,20\n"),
            "jobs.csv:2: column 'nodes': 0 is out of range (1..2147483647)");
  EXPECT_EQ(ParseError("0,u,a,p,1,-2,10,20\n"),
            "jobs.csv:2: column 'gpus_per_node': -2 is out of range (0..2147483647)");
  EXPECT_EQ(ParseError("1.5,u,a,p,1,1,10,20\n"),
            "jobs.csv:2: column 'submit': '1.5' is not an integer");
  EXPECT_EQ(ParseError("-1,u,a,p,1,1,10,20\n"), "jobs.csv:2: column 'submit': -1 is negative");
  EXPECT_EQ(ParseError("0,,a,p,1,1,10,20\n"),
            "jobs.csv:2: column 'user': empty, every job needs a user");
  EXPECT_EQ(ParseError("0,u,a,p,1,1,,20\n"),
            "jobs.csv:2: column 'run_time': empty, expected seconds or a Slurm time");
  EXPECT_EQ(ParseError("0,u,a,p,1,1,99999999999999999999,20\n"),
            "jobs.csv:2: column 'run_time': '99999999999999999999' is too large");
  EXPECT_EQ(ParseError("0,u,a,p,1,1,10,-5\n"), "jobs.csv:2: column 'time_limit': '-5' is negative");
}

TEST(LockstepCsvTest, RunTimeMustBeKnown) {
  EXPECT_EQ(ParseError("0,u,a,p,1,1,-1,20\n"), "jobs.csv:2: column 'run_time': '-1' is negative");
  EXPECT_EQ(ParseError("0,u,a,p,1,1,UNLIMITED,20\n"),
            "jobs.csv:2: column 'run_time': a run time cannot be unlimited");
  EXPECT_EQ(ParseError("0,u,a,p,1,1,1:75,20\n"),
            "jobs.csv:2: column 'run_time': invalid time '1:75': seconds (75) must be below 60");
}

TEST(LockstepCsvTest, ReadsFilesGzipOrNot) {
  ScratchDir dir;
  const std::string body = std::string(kHeader) + "0,u,a,p,1,1,10,20\n";
  for (const std::string& path : {dir.WritePlain("j.csv", body), dir.WriteGzip("j.csv.gz", body)}) {
    Result<Trace> t = ReadLockstepCsv(path);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->jobs.size(), 1u);
  }
  const std::string bad = dir.WritePlain("bad.csv", body + "0,u,a,p,one,1,10,20\n");
  Result<Trace> e = ReadLockstepCsv(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), bad + ":3: column 'nodes': 'one' is not an integer");
}

}  // namespace
}  // namespace lockstep::trace
