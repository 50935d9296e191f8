// Option values: GPU consistency, counts, arrays, dependencies, --begin and --export.
#include <gtest/gtest.h>

#include <ctime>

#include "jobspec/sbatch.h"
#include "jobspec/sbatch_test_util.h"

namespace lockstep::jobspec {
namespace {

using testing::kNow;
using testing::SbatchFixture;

class SbatchValuesTest : public SbatchFixture {
 protected:
  // Parses one option (and perhaps more) before a plain script.
  JobSpec With(std::vector<std::string> opts) {
    opts.push_back(Script("#!/bin/sh\nhostname\n"));
    return Ok(std::move(opts));
  }
  std::string ErrorWith(std::vector<std::string> opts) {
    opts.push_back(Script("#!/bin/sh\nhostname\n"));
    return Error(std::move(opts));
  }
};

// --- Counts and GPU consistency.

TEST_F(SbatchValuesTest, ZeroAndNegativeCountsAreErrors) {
  EXPECT_EQ(ErrorWith({"-n", "0"}), "sbatch: -n: '0' is not a positive integer");
  EXPECT_EQ(ErrorWith({"--ntasks-per-node=-1"}),
            "sbatch: --ntasks-per-node: '-1' is not a positive integer");
  EXPECT_EQ(ErrorWith({"-c", "x"}), "sbatch: -c: 'x' is not a positive integer");
  EXPECT_EQ(ErrorWith({"-N", "0"}),
            "sbatch: -N: '0' is not a node count (N or min-max, at least 1)");
  EXPECT_EQ(ErrorWith({"-G", "0"}), "sbatch: -G: '0' is not a GPU count: it must be at least 1");
  EXPECT_EQ(ErrorWith({"--gres=gpu:0"}),
            "sbatch: --gres: 'gpu:0' is not a GRES request: '0' is not a positive GPU count");
  EXPECT_EQ(ErrorWith({"--mem-per-cpu=0"}),
            "sbatch: --mem-per-cpu: '0' is not a memory size: it must be above 0");
  EXPECT_EQ(ErrorWith({"--mem-per-gpu=0G"}),
            "sbatch: --mem-per-gpu: '0G' is not a memory size: it must be above 0");
  EXPECT_EQ(ErrorWith({"--mem=12X"}).rfind("sbatch: --mem: '12X' is not a memory size: ", 0), 0u);
}

TEST_F(SbatchValuesTest, NodeMinimumAboveMaximum) {
  EXPECT_EQ(ErrorWith({"-N", "4-2"}),
            "sbatch: -N: '4-2' is not a node count: the minimum is above the maximum");
}

TEST_F(SbatchValuesTest, GpuCountMessages) {
  EXPECT_EQ(ErrorWith({"--gpus=x"}), "sbatch: --gpus: 'x' is not a GPU count");
  EXPECT_EQ(ErrorWith({"--gpus=a100:2,v100:1"}),
            "sbatch: --gpus: 'a100:2,v100:1' is not a GPU count: a job takes one GPU type");
  EXPECT_EQ(ErrorWith({"--gres=mps:100"}),
            "sbatch: --gres: 'mps:100' is not a GRES request: unknown GRES 'mps' (lockstep "
            "schedules gpu only)");
  EXPECT_EQ(ErrorWith({"--gres=gpu:1,gpu:2"}),
            "sbatch: --gres: 'gpu:1,gpu:2' is not a GRES request: it names gpu twice");
  EXPECT_EQ(ErrorWith({"--gres=gpu:a:1:2"}),
            "sbatch: --gres: 'gpu:a:1:2' is not a GRES request: expected gpu[:type][:count]");
}

TEST_F(SbatchValuesTest, MixingGpuTypesIsAnError) {
  EXPECT_EQ(ErrorWith({"-G", "a100:4", "--gpus-per-node=h100:2"}),
            "sbatch: -G a100:4 and --gpus-per-node=h100:2 ask for different GPU types; a job "
            "uses one GPU type");
  // An untyped option takes the job's type.
  JobSpec s = With({"-G", "a100:4", "--gpus-per-task=1", "-n", "4"});
  EXPECT_EQ(s.gpu_type, "a100");
}

TEST_F(SbatchValuesTest, GpusPerTaskNeedsATaskCount) {
  EXPECT_EQ(ErrorWith({"--gpus-per-task=1"}),
            "sbatch: --gpus-per-task: needs a task count: give -n/--ntasks (or --ntasks-per-node)");
  EXPECT_EQ(With({"--gpus-per-task=1", "--ntasks-per-node=4"}).gpus_per_task, 1);
}

TEST_F(SbatchValuesTest, GpusFewerThanNodes) {
  EXPECT_EQ(ErrorWith({"-N", "4", "--gpus=2"}),
            "sbatch: --gpus=2 asks for fewer GPUs than -N 4 asks for nodes; every node of a job "
            "needs a GPU");
}

// --- Arrays.

std::vector<std::uint32_t> Range(std::uint32_t lo, std::uint32_t hi, std::uint32_t step = 1) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t i = lo; i <= hi; i += step) v.push_back(i);
  return v;
}

TEST_F(SbatchValuesTest, ArrayForms) {
  EXPECT_EQ(With({"--array=0-15"}).array->indices, Range(0, 15));
  std::vector<std::uint32_t> list = {0, 6};
  for (std::uint32_t i : Range(16, 32)) list.push_back(i);
  EXPECT_EQ(With({"--array=0,6,16-32"}).array->indices, list);
  EXPECT_EQ(With({"--array=0-15:4"}).array->indices, Range(0, 12, 4));
  EXPECT_EQ(With({"--array=5,1-3,2"}).array->indices, (std::vector<std::uint32_t>{1, 2, 3, 5}));
  EXPECT_EQ(With({"-a", "7"}).array->indices, std::vector<std::uint32_t>{7});
}

TEST_F(SbatchValuesTest, ArrayThrottle) {
  JobSpec s = With({"--array=0-15:4%2"});
  EXPECT_EQ(s.array->indices, Range(0, 12, 4));
  EXPECT_EQ(s.array->max_running, 2u);
  EXPECT_EQ(s.array->text, "0-15:4%2");
  EXPECT_EQ(With({"--array=1-3"}).array->max_running, 0u);
}

TEST_F(SbatchValuesTest, ArrayMaximumIndex) {
  EXPECT_EQ(With({"--array=4000000"}).array->indices, std::vector<std::uint32_t>{4000000});
  EXPECT_EQ(ErrorWith({"--array=0-4000001"}),
            "sbatch: --array: '0-4000001' is not an array specification: index 4000001 is above "
            "the maximum 4000000");
}

TEST_F(SbatchValuesTest, ArrayWorkIsBounded) {
  std::string text = "0-4000000";
  for (int i = 0; i < 4; ++i) text += ",0-4000000";
  EXPECT_EQ(
      ErrorWith({"--array=" + text}),
      "sbatch: --array: '" + text + "' is not an array specification: its ranges overlap too much");
}

TEST_F(SbatchValuesTest, ArrayErrors) {
  const std::string prefix = "is not an array specification: ";
  struct Case {
    const char* text;
    const char* why;
  };
  for (const Case& c :
       {Case{"", "an entry is empty"}, Case{"1,,2", "an entry is empty"},
        Case{"a-b", "'a' is not an index"}, Case{"5-1", "range 5-1 is reversed"},
        Case{"1:2", "'1:2' has a step but no range"}, Case{"0-10:0", "'0' is not a step"},
        Case{"0-3%0", "'%0' is not a positive task limit"},
        Case{"0-3%x", "'%x' is not a positive task limit"}}) {
    EXPECT_EQ(ErrorWith({std::string("--array=") + c.text}),
              std::string("sbatch: --array: '") + c.text + "' " + prefix + c.why);
  }
}

// --- Dependencies.

TEST_F(SbatchValuesTest, DependencyForms) {
  JobSpec s = With({"-d", "afterok:12:13_4,after:5,afternotok:6_*,singleton"});
  ASSERT_EQ(s.dependencies.size(), 5u);
  EXPECT_FALSE(s.dependencies_any);
  EXPECT_EQ(s.dependencies[0].type, DependencyType::kAfterOk);
  EXPECT_EQ(s.dependencies[0].job, 12u);
  EXPECT_FALSE(s.dependencies[0].has_task);
  EXPECT_EQ(s.dependencies[1].job, 13u);
  EXPECT_TRUE(s.dependencies[1].has_task);
  EXPECT_EQ(s.dependencies[1].array_task, 4u);
  EXPECT_EQ(s.dependencies[2].type, DependencyType::kAfter);
  EXPECT_EQ(s.dependencies[3].type, DependencyType::kAfterNotOk);
  EXPECT_FALSE(s.dependencies[3].has_task);  // _* is the whole array
  EXPECT_EQ(s.dependencies[4].type, DependencyType::kSingleton);
  EXPECT_EQ(s.dependencies[4].job, 0u);
}

TEST_F(SbatchValuesTest, DependencyDelaysAndAftercorr) {
  JobSpec s = With({"--dependency=after:12+5:13,aftercorr:40"});
  ASSERT_EQ(s.dependencies.size(), 3u);
  EXPECT_EQ(s.dependencies[0].type, DependencyType::kAfter);
  EXPECT_EQ(s.dependencies[0].job, 12u);
  EXPECT_EQ(s.dependencies[0].delay_minutes, 5);
  EXPECT_EQ(s.dependencies[1].job, 13u);
  EXPECT_EQ(s.dependencies[1].delay_minutes, 0);
  EXPECT_EQ(s.dependencies[2].type, DependencyType::kAfterCorr);
  EXPECT_EQ(s.dependencies[2].job, 40u);
  // Through the API's JSON and back.
  Result<JobSpec> back = JobSpecFromJson(JobSpecToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->dependencies, s.dependencies);
}

TEST_F(SbatchValuesTest, MemZeroIsAllOfEachNodesMemory) {
  JobSpec s = With({"--mem=0"});
  EXPECT_TRUE(s.mem_whole_node);
  EXPECT_EQ(s.mem_mb, 0);
  Result<JobSpec> back = JobSpecFromJson(JobSpecToJson(s));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->mem_whole_node);
  EXPECT_FALSE(With({"--mem=1G"}).mem_whole_node);
}

TEST_F(SbatchValuesTest, DependencyAnyAndOldForm) {
  JobSpec s = With({"--dependency=afterok:1?afterany:2"});
  EXPECT_TRUE(s.dependencies_any);
  EXPECT_EQ(s.dependencies.size(), 2u);
  JobSpec old = With({"--dependency=8:9"});  // Slurm's old form: afterany
  ASSERT_EQ(old.dependencies.size(), 2u);
  EXPECT_EQ(old.dependencies[1].type, DependencyType::kAfterAny);
  EXPECT_EQ(old.dependencies[1].job, 9u);
}

TEST_F(SbatchValuesTest, DependencyErrors) {
  const std::string p = "' is not a dependency list: ";
  struct Case {
    const char* text;
    const char* why;
  };
  for (const Case& c :
       {Case{"afterok:1,afterok:2?afterok:3", "',' (all of) and '?' (any of) cannot be mixed"},
        Case{"before:1",
             "unknown dependency type 'before' (after, afterany, afterok, afternotok, "
             "aftercorr or singleton)"},
        Case{"expand:1", "'expand' dependencies are not supported by lockstep"},
        Case{"aftercorr:5_2", "'5_2': aftercorr names a whole array, not one of its tasks"},
        Case{"afterok", "'afterok' names no job"}, Case{"afterok:x", "'x' is not a job id"},
        Case{"afterok:0", "'0' is not a job id"}, Case{"afterok:1,", "an entry is empty"},
        Case{"afterok:5+10", "'5+10': a delay (+minutes) follows only an 'after' dependency's job"},
        Case{"after:5+x", "'5+x': the delay after '+' must be a number of minutes"},
        Case{"after:5+-1", "'5+-1': the delay after '+' must be a number of minutes"},
        Case{"after:5+99999999999", "'5+99999999999': the delay after '+' must be a number of minutes"},
        Case{"afterok:5_x", "'5_x' is not a job or array task id"}}) {
    EXPECT_EQ(ErrorWith({std::string("-d") + c.text}),
              std::string("sbatch: -d: '") + c.text + p + c.why);
  }
}

// --- --begin, in local time.

Time Local(int year, int month, int day, int hour, int minute, int second) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  tm.tm_isdst = -1;
  return static_cast<Time>(std::mktime(&tm));
}

std::tm NowTm() {
  const std::time_t t = kNow;
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm;
}

TEST_F(SbatchValuesTest, BeginRelativeToNow) {
  EXPECT_EQ(With({"--begin=now"}).begin_time, kNow);
  EXPECT_EQ(With({"--begin=now+60"}).begin_time, kNow + 60);
  EXPECT_EQ(With({"--begin=now+30minutes"}).begin_time, kNow + 1800);
  EXPECT_EQ(With({"--begin=now+1hour"}).begin_time, kNow + 3600);
  EXPECT_EQ(With({"--begin=now+2days"}).begin_time, kNow + 2 * 86400);
  EXPECT_EQ(With({"--begin=NOW+1week"}).begin_time, kNow + 7 * 86400);
  EXPECT_EQ(With({}).begin_time, 0);
}

TEST_F(SbatchValuesTest, BeginClockTimeIsTodayOrTomorrow) {
  const std::tm now = NowTm();
  const int y = now.tm_year + 1900, m = now.tm_mon + 1, d = now.tm_mday;
  // One minute after now (today), and one minute before now (so tomorrow).
  const Time later = kNow + 60 - now.tm_sec;
  const std::tm l = [&] {
    std::time_t t = later;
    std::tm tm{};
    localtime_r(&t, &tm);
    return tm;
  }();
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02d:%02d", l.tm_hour, l.tm_min);
  EXPECT_EQ(With({std::string("--begin=") + buf}).begin_time, later);
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", now.tm_hour, now.tm_min, 0);
  if (now.tm_sec > 0) {
    EXPECT_EQ(With({std::string("--begin=") + buf}).begin_time,
              Local(y, m, d + 1, now.tm_hour, now.tm_min, 0));
  }
  EXPECT_EQ(With({"--begin=tomorrow"}).begin_time, Local(y, m, d + 1, 0, 0, 0));
  EXPECT_EQ(With({"--begin=today"}).begin_time, Local(y, m, d, 0, 0, 0));
}

TEST_F(SbatchValuesTest, BeginDates) {
  EXPECT_EQ(With({"--begin=2030-01-31"}).begin_time, Local(2030, 1, 31, 0, 0, 0));
  EXPECT_EQ(With({"--begin=2030-01-31T16:30"}).begin_time, Local(2030, 1, 31, 16, 30, 0));
  EXPECT_EQ(With({"--begin=2030-01-31T16:30:05"}).begin_time, Local(2030, 1, 31, 16, 30, 5));
}

TEST_F(SbatchValuesTest, SignalAsSlurmWritesIt) {
  struct Case {
    const char* value;
    int number;
    Seconds time;
    bool batch_only;
  };
  const Case cases[] = {{"USR1@90", 10, 90, false}, {"B:USR1@90", 10, 90, true},
                        {"SIGUSR2", 12, 60, false}, {"10@5", 10, 5, false},
                        {"R:TERM@30", 15, 30, false}, {"BR:usr1@0", 10, 0, true}};
  for (const Case& c : cases) {
    JobSpec s = With({std::string("--signal=") + c.value});
    EXPECT_EQ(s.signal_number, c.number) << c.value;
    EXPECT_EQ(s.signal_time, c.time) << c.value;
    EXPECT_EQ(s.signal_batch_only, c.batch_only) << c.value;
  }
  for (const char* bad : {"NOPE", "USR1@x", "X:USR1", "0", "65", "USR1@70000"}) {
    EXPECT_EQ(ErrorWith({std::string("--signal=") + bad}),
              std::string("sbatch: --signal: '") + bad +
                  "' is not a signal specification ([{R|B}:]SIGNAL[@SECONDS], e.g. B:USR1@90)");
  }
}

TEST_F(SbatchValuesTest, BeginErrors) {
  for (const char* text : {"2030-02-30", "25:00", "12:60", "yesterday", "now+", "now+5parsecs",
                           "now-5", "1700000000", "2030-1-1T", ""}) {
    const std::string m = ErrorWith({std::string("--begin=") + text});
    EXPECT_EQ(m.rfind(std::string("sbatch: --begin: '") + text + "' is not a begin time (", 0), 0u)
        << m;
  }
}

// --- --export.

class SbatchExportTest : public SbatchValuesTest {
 protected:
  SbatchExportTest() {
    in.env = {{"HOME", "/home/alice"}, {"PATH", "/bin"}, {"SLURM_CONF", "/etc/slurm.conf"}};
  }
};

TEST_F(SbatchExportTest, DefaultIsAll) {
  JobSpec s = With({});
  EXPECT_EQ(s.export_mode, "ALL");
  EXPECT_EQ(s.environment, in.env);
}

TEST_F(SbatchExportTest, NoneAndNilKeepOnlySlurmVariables) {
  const std::map<std::string, std::string> slurm = {{"SLURM_CONF", "/etc/slurm.conf"}};
  EXPECT_EQ(With({"--export=NONE"}).environment, slurm);
  EXPECT_EQ(With({"--export=nil"}).environment, slurm);
  EXPECT_EQ(With({"--export=NIL"}).export_mode, "NIL");
}

TEST_F(SbatchExportTest, ListWithoutAll) {
  JobSpec s = With({"--export=HOME,EXTRA=1,MISSING"});
  EXPECT_EQ(s.environment,
            (std::map<std::string, std::string>{
                {"EXTRA", "1"}, {"HOME", "/home/alice"}, {"SLURM_CONF", "/etc/slurm.conf"}}));
  EXPECT_EQ(s.export_mode, "HOME,EXTRA=1,MISSING");
  EXPECT_EQ(With({"--export=NONE,EXTRA=1"}).environment.count("HOME"), 0u);
}

TEST_F(SbatchExportTest, AllWithAssignments) {
  JobSpec s = With({"--export=ALL,PATH=/opt/bin,X=\"a,b\""});
  EXPECT_EQ(s.environment.at("PATH"), "/opt/bin");  // an explicit value wins
  EXPECT_EQ(s.environment.at("X"), "a,b");
  EXPECT_EQ(s.environment.at("HOME"), "/home/alice");
}

TEST_F(SbatchExportTest, FromEnvironmentVariable) {
  in.env["SBATCH_EXPORT"] = "NONE";
  EXPECT_EQ(With({}).environment.count("PATH"), 0u);
  EXPECT_EQ(With({"--export=ALL"}).environment.count("PATH"), 1u);
}

TEST_F(SbatchExportTest, Errors) {
  EXPECT_EQ(ErrorWith({"--export=ALL,NONE"}),
            "sbatch: --export: 'ALL,NONE' is not an export list: it mixes ALL and NONE");
  EXPECT_EQ(ErrorWith({"--export=1BAD=2"}),
            "sbatch: --export: '1BAD=2' is not an export list: '1BAD' is not a variable name");
  EXPECT_EQ(ErrorWith({"--export=X='open"}),
            "sbatch: --export: 'X='open' is not an export list: a quote is not closed");
}

}  // namespace
}  // namespace lockstep::jobspec
