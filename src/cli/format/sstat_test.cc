#include "cli/format/sstat.h"

#include <gtest/gtest.h>

namespace lockstep::cli {
namespace {

const nlohmann::json kStep = {{"step_id", 0},
                              {"nodes", "n1,n2"},
                              {"tasks",
                               {{{"node", "n1"},
                                 {"rank", 0},
                                 {"cpu_usec", 2500000},
                                 {"rss_bytes", 2191360},
                                 {"max_rss_bytes", 3145728},
                                 {"vm_bytes", 10485760},
                                 {"max_vm_bytes", 10485760},
                                 {"pages", 2},
                                 {"read_bytes", 0},
                                 {"write_bytes", 4096},
                                 {"pids", {101, 102}}},
                                {{"node", "n2"},
                                 {"rank", 1},
                                 {"cpu_usec", 1000000},
                                 {"rss_bytes", 1048576},
                                 {"max_rss_bytes", 1048576},
                                 {"vm_bytes", 20971520},
                                 {"max_vm_bytes", 20971520},
                                 {"pages", 0},
                                 {"read_bytes", 1024},
                                 {"write_bytes", 0},
                                 {"pids", {201}}}}}};

TEST(Sstat, AggregatesTasksAsSlurmDoes) {
  SstatOptions o;
  o.format = "jobid,maxrss,maxrssnode,maxrsstask,averss,mincpu,mincputask,avecpu,ntasks,maxvmsizen";
  o.parsable = 2;
  Result<std::string> header = FormatSstatHeader(o);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(*header,
            "JobID|MaxRSS|MaxRSSNode|MaxRSSTask|AveRSS|MinCPU|MinCPUTask|AveCPU|NTasks|"
            "MaxVMSizeNode\n");
  Result<std::string> line = FormatSstatStep(42, kStep, o);
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  // Max RSS 3 MiB on n1 task 0; average RSS (2140K + 1024K) / 2 = 1582K, shown 1.54M; min CPU 1 s
  // on task 1, average 1.75 s.
  EXPECT_EQ(*line, "42.0|3M|n1|0|1.54M|00:00:01|1|00:01.750|2|n2\n");
}

TEST(Sstat, ColumnsNoconvertParsableAndErrors) {
  SstatOptions o;
  o.format = "jobid,maxrss,pids";
  Result<std::string> header = FormatSstatHeader(o);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(*header,
            "JobID            MaxRSS                 Pids \n"
            "------------ ---------- -------------------- \n");
  nlohmann::json batch = kStep;
  batch["step_id"] = "batch";
  EXPECT_EQ(*FormatSstatStep(42, batch, o), "42.batch             3M          101,102,201 \n");
  o.noconvert = true;
  o.parsable = 1;
  EXPECT_EQ(*FormatSstatStep(42, batch, o), "42.batch|3145728|101,102,201|\n");
  o.noheader = true;
  EXPECT_EQ(*FormatSstatHeader(o), "");
  o.format = "jobid,bogus";
  EXPECT_EQ(FormatSstatHeader(o).status().message(), "Invalid field requested: \"bogus\"");
  nlohmann::json empty = {{"step_id", 1}, {"tasks", nlohmann::json::array()}};
  o.format = "";
  EXPECT_EQ(FormatSstatStep(42, empty, o).status().code(), StatusCode::kFailedPrecondition);
}

TEST(Sstat, DefaultColumnsAreSlurms) {
  SstatOptions o;
  o.parsable = 2;
  Result<std::string> header = FormatSstatHeader(o);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->rfind("JobID|MaxVMSize|MaxVMSizeNode|MaxVMSizeTask|AveVMSize|MaxRSS|", 0), 0u)
      << *header;
  EXPECT_NE(header->find("|TRESUsageOutTot\n"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::cli
