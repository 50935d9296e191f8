#include "cli/format/squeue.h"

#include <gtest/gtest.h>

#include "cli/format/format_test_data.h"

namespace lockstep::cli {
namespace {

// Golden outputs keep one report line a source line.
// clang-format off

using testdata::kNow;

std::string Squeue(const nlohmann::json& jobs, SqueueOptions options) {
  options.now = kNow;
  Result<std::string> out = FormatSqueue(jobs, options);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : "";
}

// squeue(1)'s default report. Rows are in Slurm's default order "P,t,-p": partition, then the
// compact state as text ("PD" before "R"), then priority, highest first.
TEST(Squeue, DefaultFormatGolden) {
  EXPECT_EQ(
      Squeue(testdata::Jobs(), {}),
      "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
      "       40_[3-10%2]       cpu preproce verylong PD       0:00      1 (JobArrayTaskLimit)\n"
      "              40_2       cpu preproce verylong  R 1-01:01:01      1 cpu07\n"
      "              1235       gpu    train    alice PD       0:00     64 (Resources)\n"
      "              1234       gpu    train    alice  R    1:02:03     64 gpu-node[001-064]\n");
}

// -l: a date line, the long state, and TIME_LIMIT cut to its 9 columns in the header while a
// limit longer than the column is printed whole (Slurm does not cut times).
TEST(Squeue, LongFormatGolden) {
  SqueueOptions options;
  options.long_format = true;
  EXPECT_EQ(
      Squeue(testdata::Jobs(), options),
      "Sat Nov 29 08:06:40 2025\n"
      "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES "
      "NODELIST(REASON)\n"
      "       40_[3-10%2]       cpu preproce verylong  PENDING       0:00 UNLIMITED      1 "
      "(JobArrayTaskLimit)\n"
      "              40_2       cpu preproce verylong  RUNNING 1-01:01:01 UNLIMITED      1 cpu07\n"
      "              1235       gpu    train    alice  PENDING       0:00   1:00:00     64 (Resources)\n"
      "              1234       gpu    train    alice  RUNNING    1:02:03 1-00:00:00     64 gpu-node[001-064]\n");
}

// --start over the pending jobs: sorted by expected start, unknown starts ("N/A") first because
// Slurm counts them as now + 100 s; SCHEDNODES is "(null)" when the scheduler has not chosen.
TEST(Squeue, StartFormatGolden) {
  nlohmann::json pending = nlohmann::json::array();
  for (const auto& job : testdata::Jobs()) {
    if (job["state"] == "PENDING") pending.push_back(job);
  }
  SqueueOptions options;
  options.start = true;
  EXPECT_EQ(Squeue(pending, options),
            "             JOBID PARTITION     NAME     USER ST          START_TIME  NODES SCHEDNODES           NODELIST(REASON)\n"
            "       40_[3-10%2]       cpu preproce verylong PD                 N/A      1 (null)               (JobArrayTaskLimit)\n"
            "              1235       gpu    train    alice PD 2025-11-29T08:36:40     64 (null)               (Resources)\n");
}

TEST(Squeue, NoHeader) {
  SqueueOptions options;
  options.noheader = true;
  options.format = "%i";
  EXPECT_EQ(Squeue(testdata::Jobs(), options), "40_[3-10%2]\n40_2\n1235\n1234\n");
}

// -r: a pending array prints one line per task, its %i as "array_task".
TEST(Squeue, ArrayExpanded) {
  nlohmann::json jobs = nlohmann::json::array({testdata::Jobs()[2]});
  jobs[0]["array_task_str"] = "3-5,9%2";
  SqueueOptions options;
  options.array_expanded = true;
  options.format = "%.8i %.4K %F %A %t";
  EXPECT_EQ(Squeue(jobs, options),
            "   JOBID ARRA ARRAY_JOB_ID JOBID ST\n"
            "    40_3    3 40 40 PD\n"
            "    40_4    4 40 40 PD\n"
            "    40_5    5 40 40 PD\n"
            "    40_9    9 40 40 PD\n");
  options.array_expanded = false;
  EXPECT_EQ(Squeue(jobs, options),
            "   JOBID ARRA ARRAY_JOB_ID JOBID ST\n"
            "40_[3-5, 3-5, 40 40 PD\n");
}

TEST(Squeue, TruncationAndJustification) {
  SqueueOptions options;
  options.noheader = true;
  options.format = "[%5j|%.5j|%j|%.5N|%5N]";
  options.sort = "-i";
  EXPECT_EQ(Squeue(nlohmann::json::array({testdata::Jobs()[0]}), options),
            "[train|train|train|gpu-node[001-064]|gpu-n]\n");
  options.format = "[%5j|%.5j|%.20j]";
  EXPECT_EQ(Squeue(nlohmann::json::array({testdata::Jobs()[2]}), options),
            "[prepr|prepr|     preprocess-data]\n");
}

TEST(Squeue, TimeAndPriorityFields) {
  SqueueOptions options;
  options.noheader = true;
  options.format = "%i|%l|%L|%S|%e|%V|%Q|%p|%r";
  EXPECT_EQ(Squeue(testdata::Jobs(), options),
            "40_[3-10%2]|UNLIMITED|UNLIMITED|N/A|N/A|2025-11-28T06:06:40|100|0.00000002328306|JobArrayTaskLimit\n"
            "40_2|UNLIMITED|UNLIMITED|2025-11-28T07:05:39|NONE|2025-11-28T06:06:40|100|0.00000002328306|None\n"
            "1235|1:00:00|1:00:00|2025-11-29T08:36:40|2025-11-29T09:36:40|2025-11-29T08:05:40|4000|0.00000093132257|Resources\n"
            "1234|1-00:00:00|22:57:57|2025-11-29T07:04:37|2025-11-30T07:04:37|2025-11-29T06:06:40|5000|0.00000116415322|None\n");
}

TEST(Squeue, OtherFields) {
  SqueueOptions options;
  options.noheader = true;
  options.format = "%A %a %q %C %D %b %E %f %v %Z %B %m %y %U %G %T";
  options.sort = "i";
  EXPECT_EQ(Squeue(testdata::Jobs(), options),
            "42 data normal 2 1 N/A (null) (null) (null) /data cpu07 4G 0 1001 1001 RUNNING\n"
            "40 data normal 2 1 N/A (null) (null) (null) /data n/a 4G 0 1001 1001 PENDING\n"
            "1234 llm normal 4096 64 gres:gpu:8 (null) (null) (null) /home/alice gpu-node001 0 0 1000 1000 RUNNING\n"
            "1235 llm normal 4096 64 gres:gpu:8 afterok:1234 (null) (null) /home/alice n/a 0 0 1000 1000 PENDING\n");
}

TEST(Squeue, CompactStates) {
  nlohmann::json jobs = nlohmann::json::array();
  const char* states[] = {"PENDING", "RUNNING", "COMPLETING", "COMPLETED", "CANCELLED",
                          "FAILED",  "TIMEOUT", "NODE_FAIL",  "PREEMPTED", "OUT_OF_MEMORY"};
  int id = 1;
  for (const char* state : states) {
    jobs.push_back({{"job_id", id++},
                    {"state", state},
                    {"partition", "p"},
                    {"reason", "None"},
                    {"nodes", "n1"}});
  }
  SqueueOptions options;
  options.noheader = true;
  options.format = "%t:%R";
  options.sort = "i";
  EXPECT_EQ(
      Squeue(jobs, options),
      "PD:(None)\nR:n1\nCG:n1\nCD:n1\nCA:n1\nF:(None)\nTO:(None)\nNF:n1\nPR:n1\nOOM:(None)\n");
}

TEST(Squeue, SortKeys) {
  SqueueOptions options;
  options.noheader = true;
  options.format = "%i";
  options.sort = "-M";
  EXPECT_EQ(Squeue(testdata::Jobs(), options), "40_2\n1234\n40_[3-10%2]\n1235\n");
  options.sort = "u,-i";
  EXPECT_EQ(Squeue(testdata::Jobs(), options), "1235\n1234\n40_[3-10%2]\n40_2\n");
}

TEST(Squeue, AcceptsTheApiEnvelopeAndEmptyLists) {
  SqueueOptions options;
  options.format = "%i";
  EXPECT_EQ(Squeue(nlohmann::json{{"jobs", nlohmann::json::array()}}, options), "JOBID\n");
}

// Every letter of Slurm 22.05's squeue is known: none is printed as text.
TEST(Squeue, EveryLetterOfSlurm2205) {
  SqueueOptions options;
  options.noheader = true;
  for (char c : std::string("aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ")) {
    options.format = std::string("%") + c;
    Result<std::string> out = FormatSqueue(testdata::Jobs(), options);
    ASSERT_TRUE(out.ok()) << c << ": " << out.status().ToString();
    EXPECT_EQ(out->find(std::string("%") + c), std::string::npos) << c << ":\n" << *out;
  }
}

// Unknown letters (and sinfo's '#' width) are printed as text, as Slurm 22.05's squeue does.
TEST(Squeue, UnknownLetterPrintedAsText) {
  SqueueOptions options;
  options.format = "%i|%1|%#i";
  options.noheader = true;
  Result<std::string> out = FormatSqueue(testdata::Jobs(), options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_NE(out->find("|%1|%#i\n"), std::string::npos) << *out;
}

TEST(Squeue, Errors) {
  SqueueOptions options;
  options.format = "%i %";
  EXPECT_FALSE(FormatSqueue(testdata::Jobs(), options).ok());
  options.format = "";
  options.sort = "P,Z";
  EXPECT_FALSE(FormatSqueue(testdata::Jobs(), options).ok());
  options.sort = "";
  EXPECT_FALSE(FormatSqueue(nlohmann::json{{"nodes", 1}}, options).ok());
  EXPECT_FALSE(FormatSqueue(nlohmann::json::array({1}), options).ok());
  nlohmann::json bad = nlohmann::json::array({testdata::Jobs()[2]});
  bad[0]["array_task_str"] = "3-x";
  options.array_expanded = true;
  EXPECT_FALSE(FormatSqueue(bad, options).ok());
}

// clang-format on

}  // namespace
}  // namespace lockstep::cli
