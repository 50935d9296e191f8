#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <tuple>

#include "trace/trace.h"
#include "trace/trace_test_util.h"

namespace lockstep::trace {
namespace {

using testing::ScratchDir;
using testing::SharedTrace;

// A job line with the fields the reader uses; the others as a real trace has them.
std::string SwfLine(int id, int submit, int wait, int run, int alloc, int req, int limit,
                    int user = 3, int group = 1) {
  return fmt::format("{} {} {} {} {} 552.21 -1 {} {} -1 1 {} {} -1 1 1 -1 -1\n", id, submit, wait,
                     run, alloc, req, limit, user, group);
}

Trace ParseOk(std::string_view text) {
  Result<Trace> r = ParseSwf(text, "t.swf");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : Trace{};
}

std::string ParseError(std::string_view text) {
  Result<Trace> r = ParseSwf(text, "t.swf");
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(SwfTest, MapsFields) {
  Trace t = ParseOk(SwfLine(7, 100, 30, 3600, 16, 32, 7200, 12, 4));
  ASSERT_EQ(t.jobs.size(), 1u);
  const TraceJob& j = t.jobs[0];
  EXPECT_EQ(j.id, 7);
  EXPECT_EQ(j.submit, 100);
  EXPECT_EQ(j.recorded_wait, 30);
  EXPECT_EQ(j.run_time, 3600);
  EXPECT_EQ(j.procs, 32);  // requested wins over allocated
  EXPECT_EQ(j.time_limit, 7200);
  EXPECT_EQ(j.user, "u12");
  EXPECT_EQ(j.account, "g4");
  EXPECT_EQ(j.partition, "");
  EXPECT_EQ(j.nodes, 0);
  EXPECT_EQ(t.skipped, 0);
  EXPECT_TRUE(t.nodes.empty());  // no header: the trace does not say
}

TEST(SwfTest, UnknownsAndFallbacks) {
  Trace t = ParseOk(SwfLine(1, 0, -1, 0, 8, -1, -1));
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].procs, 8);  // allocated when requested is unknown
  EXPECT_EQ(t.jobs[0].time_limit, -1);
  EXPECT_EQ(t.jobs[0].recorded_wait, -1);
  EXPECT_EQ(t.jobs[0].run_time, 0);  // zero run time is a valid record
}

TEST(SwfTest, SkipsRecordsThatCannotRun) {
  Trace t = ParseOk(SwfLine(1, 0, 0, 10, -1, -1, 60) +  // no processors
                    SwfLine(2, 1, 0, -1, 4, 4, 60) +    // no run time
                    SwfLine(3, 2, 0, 10, 0, 0, 60) +    // zero processors
                    SwfLine(4, 3, 0, 10, 4, 4, 60));
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].id, 4);
  EXPECT_EQ(t.skipped, 3);
}

TEST(SwfTest, SortsBySubmitStably) {
  Trace t = ParseOk(SwfLine(1, 50, 0, 1, 1, 1, 1) + SwfLine(2, 10, 0, 1, 1, 1, 1) +
                    SwfLine(3, 50, 0, 1, 1, 1, 1) + SwfLine(4, 0, 0, 1, 1, 1, 1));
  std::vector<std::int64_t> ids;
  for (const TraceJob& j : t.jobs) ids.push_back(j.id);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{4, 2, 1, 3}));
}

TEST(SwfTest, BlankLinesTabsAndCrLf) {
  std::string text = "\n; Version: 2.2\r\n\n" + SwfLine(1, 0, 0, 5, 2, 2, 10) + "   \n\t\n";
  text += "2\t1\t0\t5\t2\t-1\t-1\t2\t10\t-1\t1\t1\t1\t-1\t1\t1\t-1\t-1\r\n";
  Trace t = ParseOk(text);
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[1].id, 2);
  EXPECT_EQ(t.jobs[1].time_limit, 10);
}

TEST(SwfTest, HeaderDescribesCluster) {
  Trace t = ParseOk("; MaxNodes: 4\n;MaxProcs:8\n" + SwfLine(1, 0, 0, 5, 2, 2, 10));
  ASSERT_EQ(t.nodes.size(), 4u);
  EXPECT_EQ(t.nodes[0].name, "n0");
  EXPECT_EQ(t.nodes[3].name, "n3");
  for (const TraceNode& n : t.nodes) EXPECT_EQ(n.cpus, 2);

  Trace wide = ParseOk("; MaxNodes: 12 (nodes)\n; MaxProcs: 12\n");
  ASSERT_EQ(wide.nodes.size(), 12u);
  EXPECT_EQ(wide.nodes[0].name, "n00");  // names share one width
  EXPECT_EQ(wide.nodes[11].name, "n11");
  EXPECT_EQ(wide.nodes[11].cpus, 1);
}

// A header whose MaxProcs is not MaxNodes times a whole number: thin and fat nodes that add up
// to MaxProcs, not MaxNodes x floor(MaxProcs / MaxNodes) (which lost 4,608 of the 93,312
// processors of one log of the archive).
TEST(SwfTest, NodesAddUpToMaxProcsWhenTheyDoNotDivide) {
  Trace t = ParseOk("; MaxNodes: 4\n; MaxProcs: 10\n");
  ASSERT_EQ(t.nodes.size(), 4u);
  EXPECT_EQ(t.nodes[0].cpus, 2);
  EXPECT_EQ(t.nodes[1].cpus, 2);
  EXPECT_EQ(t.nodes[2].cpus, 3);
  EXPECT_EQ(t.nodes[3].cpus, 3);
  Trace big = ParseOk("; MaxNodes: 1152\n; MaxProcs: 93312\n");
  std::int64_t sum = 0;
  for (const TraceNode& n : big.nodes) sum += n.cpus;
  EXPECT_EQ(sum, 93312);
  EXPECT_EQ(big.nodes.size(), 1152u);
}

TEST(SwfTest, HeaderWithOneCountOnly) {
  Trace nodes_only = ParseOk("; MaxNodes: 3\n");
  ASSERT_EQ(nodes_only.nodes.size(), 3u);
  EXPECT_EQ(nodes_only.nodes[0].cpus, 1);
  Trace procs_only = ParseOk("; MaxProcs: 5\n");
  EXPECT_EQ(procs_only.nodes.size(), 5u);
  // Fewer processors than nodes: one node per processor, so the machine has MaxProcs.
  Trace more_nodes = ParseOk("; MaxNodes: 8\n; MaxProcs: 4\n");
  ASSERT_EQ(more_nodes.nodes.size(), 4u);
  EXPECT_EQ(more_nodes.nodes[0].cpus, 1);
  EXPECT_TRUE(ParseOk("; MaxNodes: -1\n; MaxProcs: -1\n").nodes.empty());
}

TEST(SwfTest, WrongFieldCountNamesLine) {
  EXPECT_EQ(ParseError(SwfLine(1, 0, 0, 5, 2, 2, 10) + "\n1 2 3 4 5 6 7\n"),
            "t.swf:3: expected 18 fields, found 7");
  EXPECT_EQ(ParseError("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19\n"),
            "t.swf:1: expected 18 fields, found 19");
}

TEST(SwfTest, NonNumberNamesField) {
  EXPECT_EQ(ParseError("; c\n1 0 0 5 x -1 -1 2 10 -1 1 1 1 -1 1 1 -1 -1\n"),
            "t.swf:2: field 5 (allocated processors): 'x' is not a number");
  EXPECT_EQ(ParseError("1 0 0 5 2 -1 -1 2 10 -1 1 1 1 -1 1 1 -1 abc\n"),
            "t.swf:1: field 18 (think time): 'abc' is not a number");
  // Only average CPU time and memory may be fractional.
  EXPECT_EQ(ParseError("1 0 0 5.5 2 -1 -1 2 10 -1 1 1 1 -1 1 1 -1 -1\n"),
            "t.swf:1: field 4 (run time): '5.5' is not an integer");
  EXPECT_EQ(ParseOk("1 0 0 5 2 1.5 2.25 2 10 1024.5 1 1 1 -1 1 1 -1 -1\n").jobs.size(), 1u);
}

TEST(SwfTest, BadHeaderNamesLine) {
  EXPECT_EQ(ParseError("; Version: 2\n; MaxNodes: many\n"),
            "t.swf:2: header MaxNodes: 'many' is not a number");
  EXPECT_EQ(ParseError("; MaxProcs: 99999999999\n"),
            "t.swf:1: header MaxProcs: 99999999999 is more than 1000000");
}

TEST(SwfTest, ReadsGzipAndNamesPathInErrors) {
  ScratchDir dir;
  const std::string good =
      dir.WriteGzip("good.swf.gz", "; MaxNodes: 2\n" + SwfLine(1, 0, 0, 5, 2, 2, 10));
  Result<Trace> t = ReadSwf(good);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->jobs.size(), 1u);
  EXPECT_EQ(t->nodes.size(), 2u);

  const std::string bad = dir.WriteGzip("bad.swf.gz", SwfLine(1, 0, 0, 5, 2, 2, 10) + "1 2\n");
  Result<Trace> e = ReadSwf(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), bad + ":2: expected 18 fields, found 2");

  Result<Trace> missing = ReadSwf(dir.File("none.swf"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(dir.File("none.swf")), std::string::npos);
}

// ReadSwf parses while it decompresses, piece by piece: a file of many pieces, with lines cut
// between them, CRLF endings and no '\n' at the end, reads as ParseSwf reads the whole text.
TEST(SwfTest, ReadingInPiecesGivesWhatTheWholeTextGives) {
  std::string text = "; MaxNodes: 4\r\n";
  for (int i = 1; i <= 30000; ++i) {  // about 2 MB: more than a dozen pieces
    std::string line = SwfLine(i, i * 7, i % 13, 1 + i % 500, 1 + i % 4, -1, 600, i % 17, i % 5);
    if (i % 3 == 0) line.insert(line.size() - 1, "\r");
    if (i % 1000 == 0) line += "\n  \t\n";  // blank lines
    text += line;
  }
  text += SwfLine(30001, 1, 0, 9, 2, 2, 60);
  text.pop_back();  // the last line ends the file without '\n'
  ScratchDir dir;
  for (const std::string& path :
       {dir.WriteGzip("pieces.swf.gz", text), dir.WritePlain("pieces.swf", text)}) {
    Result<Trace> read = ReadSwf(path);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    const Trace whole = ParseOk(text);
    ASSERT_EQ(read->jobs.size(), 30001u);
    ASSERT_EQ(read->jobs.size(), whole.jobs.size());
    for (std::size_t j = 0; j < whole.jobs.size(); ++j) {
      const TraceJob &a = read->jobs[j], &b = whole.jobs[j];
      ASSERT_EQ(std::tie(a.id, a.submit, a.run_time, a.time_limit, a.procs, a.user, a.account,
                         a.recorded_wait),
                std::tie(b.id, b.submit, b.run_time, b.time_limit, b.procs, b.user, b.account,
                         b.recorded_wait))
          << path << ": job " << j;
    }
    EXPECT_EQ(read->nodes.size(), 4u);
  }
  // Errors name the line counted across pieces, blank lines included.
  text += "\n1 2 3\n";
  const std::string bad = dir.WriteGzip("bad_pieces.swf.gz", text);
  Result<Trace> e = ReadSwf(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), bad + ":30063: expected 18 fields, found 3");
}

TEST(SwfTest, UnusualButValidNumbersReadAlike) {
  // Leading zeros, "-0", and fractional fields written as ".5", "5." or "1e3": the one-pass
  // reader leaves some of these to the checked parse; either way they read the same.
  const Trace t = ParseOk(
      "007 -0 3 04 5 .5 5. 8 9 1e3 11 012 13 14 15 16 17 18\n"
      "8 1 3 4 5 0.5 -1.25 8 9 -1 11 12 13 14 15 16 17 18\n");
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].id, 7);
  EXPECT_EQ(t.jobs[0].submit, 0);
  EXPECT_EQ(t.jobs[0].run_time, 4);
  EXPECT_EQ(t.jobs[0].user, "u12");
  EXPECT_EQ(t.jobs[1].procs, 8);
  EXPECT_EQ(t.jobs[1].time_limit, 9);
  EXPECT_EQ(ParseError("1 2 3 4 5 6 7 8 9. 10 11 12 13 14 15 16 17 18\n"),
            "t.swf:1: field 9 (requested time): '9.' is not an integer");
  EXPECT_EQ(ParseError("1 2 3 - 5 6 7 8 9 10 11 12 13 14 15 16 17 18\n"),
            "t.swf:1: field 4 (run time): '-' is not a number");
  EXPECT_EQ(ParseError("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19\n"),
            "t.swf:1: expected 18 fields, found 19");
}

TEST(SwfTest, LongNumbersStillGetTheCheckedParse) {
  // 19 digits fit an int64; 20 do not; a '+' sign is not SWF.
  EXPECT_EQ(ParseOk("1 2 3 4 5 6 7 8 9 10 11 1234567890123456789 13 14 15 16 17 18\n").jobs[0].user,
            "u1234567890123456789");
  EXPECT_EQ(ParseError("1 2 3 4 5 6 7 8 9 10 11 12345678901234567890 13 14 15 16 17 18\n"),
            "t.swf:1: field 12 (user id): '12345678901234567890' is not an integer");
  EXPECT_EQ(ParseError("1 +2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18\n"),
            "t.swf:1: field 2 (submit time): '+2' is not a number");
}

// Jobs and the count of data lines of a real trace, counted independently of the reader.
std::int64_t CountDataLines(const std::string& text) {
  std::int64_t n = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] != ';') ++n;
    pos = nl + 1;
  }
  return n;
}

TEST(SwfRealTraceTest, Hpc2n) {
  const std::string path = SharedTrace("swf/HPC2N-2002-2.1-cln.swf.gz");
  LOCKSTEP_SKIP_IF_ABSENT(path, "swf/HPC2N-2002-2.1-cln.swf.gz");
  const std::string text = *ReadFileMaybeGzip(path);
  const auto start = std::chrono::steady_clock::now();
  Result<Trace> t = ParseSwf(text, path);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(static_cast<std::int64_t>(t->jobs.size()) + t->skipped, CountDataLines(text));
  EXPECT_EQ(static_cast<std::int64_t>(t->jobs.size()) + t->skipped, 202876);  // data/README.md
  ASSERT_EQ(t->nodes.size(), 240u);  // MaxNodes: 240, MaxProcs: 240
  EXPECT_EQ(t->nodes[0].cpus, 1);
  EXPECT_TRUE(
      std::is_sorted(t->jobs.begin(), t->jobs.end(),
                     [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; }));
  EXPECT_EQ(t->jobs[0].id, 1);
  EXPECT_EQ(t->jobs[0].procs, 30);
  EXPECT_EQ(t->jobs[0].run_time, 31405);
  EXPECT_EQ(t->jobs[0].time_limit, 37980);
  // About 0.1 s in a release build; the bound only catches a parser gone quadratic.
  EXPECT_LT(ms, 5000) << "parsing HPC2N took " << ms << " ms";
}

TEST(SwfRealTraceTest, Kth) {
  const std::string path = SharedTrace("swf/KTH-SP2-1996-2.1-cln.swf.gz");
  LOCKSTEP_SKIP_IF_ABSENT(path, "swf/KTH-SP2-1996-2.1-cln.swf.gz");
  Result<Trace> t = ReadSwf(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(static_cast<std::int64_t>(t->jobs.size()) + t->skipped, 27992);  // data/README.md
  EXPECT_EQ(t->nodes.size(), 100u);
}

TEST(SwfRealTraceTest, Lublin) {
  const std::string path = SharedTrace("swf/lublin_256.swf");
  LOCKSTEP_SKIP_IF_ABSENT(path, "swf/lublin_256.swf");
  Result<Trace> t = ReadSwf(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(static_cast<std::int64_t>(t->jobs.size()) + t->skipped, 10000);
  ASSERT_EQ(t->nodes.size(), 256u);  // MaxNodes only: one CPU each
  EXPECT_EQ(t->jobs[0].procs, 16);   // requested is -1: allocated
  EXPECT_EQ(t->jobs[0].user, "u-1");
}

}  // namespace
}  // namespace lockstep::trace
