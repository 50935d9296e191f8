#include "backend/agent/task_usage.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace lockstep::agent {
namespace {

TEST(TaskUsage, ParsesProcStatAfterACommWithSpacesAndParentheses) {
  // Fields: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
  // utime stime cutime cstime priority nice threads itrealvalue starttime vsize rss ...
  const std::string stat =
      "42 (my (odd) prog) R 1 42 42 0 -1 4194304 100 0 7 3 250 50 20 10 20 0 1 0 1000 "
      "123456789 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0";
  std::optional<ProcessUsage> u = ParseProcStat(stat);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->cpu_ticks, 300);
  EXPECT_EQ(u->child_ticks, 30);
  EXPECT_EQ(u->major_faults, 10);
  EXPECT_EQ(u->vm_bytes, 123456789);
  EXPECT_EQ(u->rss_pages, 2048);
  EXPECT_FALSE(ParseProcStat("42 (short) R 1 2 3"));
  EXPECT_FALSE(ParseProcStat("garbage"));
}

TEST(TaskUsage, ParsesStatusIoAndIoStat) {
  EXPECT_EQ(ParseStatusKb("Name:\tx\nVmHWM:\t    1024 kB\nVmRSS:\t 512 kB\n", "VmHWM"), 1048576);
  EXPECT_FALSE(ParseStatusKb("VmRSS: 5 kB\n", "VmHWM"));
  EXPECT_EQ(ParseColonValue("rchar: 9\nread_bytes: 4096\nwrite_bytes: 8192\n", "write_bytes"),
            8192);
  IoBytes io = ParseIoStat("8:0 rbytes=100 wbytes=200 rios=1 wios=2\n8:16 rbytes=5 wbytes=7\n");
  EXPECT_EQ(io.read, 105);
  EXPECT_EQ(io.write, 207);
}

TEST(TaskUsage, ReadsThisProcessFromProc) {
  volatile double x = 0;  // some CPU time of our own, so that it cannot read 0 by luck
  for (int i = 0; i < 20000000; ++i) x = x + i * 0.5;
  TaskUsageSample s = ReadTaskUsage({::getpid()}, "");
  ASSERT_EQ(s.pids.size(), 1u);
  EXPECT_GT(s.cpu_usec, 0);
  EXPECT_GT(s.rss_bytes, 0);
  EXPECT_GE(s.max_rss_bytes, s.rss_bytes);
  EXPECT_GT(s.vm_bytes, s.rss_bytes);
  EXPECT_TRUE(ReadTaskUsage({999999999}, "").pids.empty());
}

}  // namespace
}  // namespace lockstep::agent
