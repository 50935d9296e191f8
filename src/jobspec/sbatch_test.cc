// sbatch options on the command line, and ParseSrunArgs.
#include "jobspec/sbatch.h"

#include <gtest/gtest.h>

#include "jobspec/sbatch_test_util.h"

namespace lockstep::jobspec {
namespace {

using testing::kNow;
using testing::SbatchFixture;

constexpr const char* kPlain = "#!/bin/bash\necho hi\n";

class SbatchCommandLineTest : public SbatchFixture {};

TEST_F(SbatchCommandLineTest, LongOptionsWithEquals) {
  JobSpec s = Ok({"--job-name=train", "--partition=gpu", "--nodes=2", "--ntasks=16",
                  "--ntasks-per-node=8", "--cpus-per-task=4", "--mem=64G", "--gpus=a100:16",
                  "--gpus-per-task=a100:1", "--time=1-00:00:00", "--output=o-%j.out",
                  "--error=e-%j.err", "--qos=high", "--account=ml", "--constraint=ib&a100",
                  "--container-image=nvcr.io/pytorch:24.01", "--switches=1@10:00", Script(kPlain)});
  EXPECT_EQ(s.name, "train");
  EXPECT_EQ(s.partition, "gpu");
  EXPECT_EQ(s.min_nodes, 2);
  EXPECT_EQ(s.max_nodes, 2);
  EXPECT_EQ(s.ntasks, 16);
  EXPECT_EQ(s.ntasks_per_node, 8);
  EXPECT_EQ(s.cpus_per_task, 4);
  EXPECT_EQ(s.mem_mb, 65536);
  EXPECT_EQ(s.gpus, 16);
  EXPECT_EQ(s.gpus_per_task, 1);
  EXPECT_EQ(s.gpu_type, "a100");
  EXPECT_EQ(s.time_limit, 86400);
  EXPECT_EQ(s.output, "o-%j.out");
  EXPECT_EQ(s.error, "e-%j.err");
  EXPECT_EQ(s.qos, "high");
  EXPECT_EQ(s.account, "ml");
  EXPECT_EQ(s.constraint, "ib&a100");
  EXPECT_EQ(s.container_image, "nvcr.io/pytorch:24.01");
  EXPECT_EQ(s.max_switches, 1);
  EXPECT_EQ(s.switches_wait, 600);
  EXPECT_EQ(s.script, kPlain);
  EXPECT_TRUE(s.warnings.empty());
}

TEST_F(SbatchCommandLineTest, LongOptionsWithSeparateValues) {
  JobSpec s = Ok({"--job-name", "train", "--partition", "gpu", "--mem-per-cpu", "2G", "--time",
                  "90", "--dependency", "afterok:7", "--begin", "now+1hour", Script(kPlain)});
  EXPECT_EQ(s.name, "train");
  EXPECT_EQ(s.partition, "gpu");
  EXPECT_EQ(s.mem_per_cpu_mb, 2048);
  EXPECT_EQ(s.time_limit, 5400);
  ASSERT_EQ(s.dependencies.size(), 1u);
  EXPECT_EQ(s.dependencies[0].job, 7u);
  EXPECT_EQ(s.begin_time, kNow + 3600);
}

TEST_F(SbatchCommandLineTest, ShortOptionsAttachedAndSeparate) {
  files["/home/alice/run/sub/train.sbatch"] = kPlain;  // found from -D, as in sbatch
  JobSpec s = Ok({"-Jtrain", "-p",         "gpu", "-N2", "-n",          "8",         "-c4", "-G",
                  "h100:8",  "-t",         "30",  "-o",  "out.txt",     "-eerr.txt", "-a",  "0-3",
                  "-d",      "afterany:9", "-q",  "low", "-Aml",        "-H",        "-D",  "sub",
                  "-C",      "nvlink",     "-b",  "now", "train.sbatch"});
  EXPECT_EQ(s.name, "train");
  EXPECT_EQ(s.partition, "gpu");
  EXPECT_EQ(s.min_nodes, 2);
  EXPECT_EQ(s.ntasks, 8);
  EXPECT_EQ(s.cpus_per_task, 4);
  EXPECT_EQ(s.gpus, 8);
  EXPECT_EQ(s.gpu_type, "h100");
  EXPECT_EQ(s.time_limit, 30 * 60);  // a bare number is minutes
  EXPECT_EQ(s.output, "out.txt");
  EXPECT_EQ(s.error, "err.txt");
  ASSERT_TRUE(s.array.has_value());
  EXPECT_EQ(s.array->indices.size(), 4u);
  EXPECT_EQ(s.dependencies[0].type, DependencyType::kAfterAny);
  EXPECT_EQ(s.qos, "low");
  EXPECT_EQ(s.account, "ml");
  EXPECT_TRUE(s.hold);
  EXPECT_EQ(s.work_dir, "/home/alice/run/sub");
  EXPECT_EQ(s.constraint, "nvlink");
  EXPECT_EQ(s.begin_time, kNow);
}

TEST_F(SbatchCommandLineTest, GroupedShortFlags) {
  JobSpec s = Ok({"-HJgrouped", Script(kPlain)});
  EXPECT_TRUE(s.hold);
  EXPECT_EQ(s.name, "grouped");
}

TEST_F(SbatchCommandLineTest, UniquePrefixOfALongOption) {
  JobSpec s = Ok({"--part=gpu", "--job=x", "--no-req", Script(kPlain)});
  EXPECT_EQ(s.partition, "gpu");
  EXPECT_EQ(s.name, "x");
  EXPECT_EQ(s.requeue, std::optional<bool>(false));
}

TEST_F(SbatchCommandLineTest, AmbiguousPrefixIsAnError) {
  const std::string m = Error({"--ex", Script(kPlain)});
  EXPECT_NE(m.find("sbatch: option '--ex' is ambiguous"), std::string::npos) << m;
  EXPECT_NE(m.find("'--exclusive'"), std::string::npos) << m;
  EXPECT_NE(m.find("'--export'"), std::string::npos) << m;
  // "--exc" is --exclusive or Slurm's --exclude, as in Slurm.
  EXPECT_NE(Error({"--exc", Script(kPlain)}).find("ambiguous"), std::string::npos);
}

TEST_F(SbatchCommandLineTest, ScriptArgumentsFollowTheScript) {
  JobSpec s = Ok({"-N", "2", Script(kPlain), "--lr", "0.1", "-n", "3"});
  EXPECT_EQ(s.script_args, (std::vector<std::string>{"--lr", "0.1", "-n", "3"}));
  EXPECT_EQ(s.ntasks, 0);
}

TEST_F(SbatchCommandLineTest, DoubleDashEndsOptions) {
  files["/home/alice/run/-odd.sh"] = kPlain;
  JobSpec s = Ok({"-N", "2", "--", "-odd.sh", "x"});
  EXPECT_EQ(s.name, "-odd.sh");
  EXPECT_EQ(s.script_args, std::vector<std::string>{"x"});
}

TEST_F(SbatchCommandLineTest, TimeForms) {
  EXPECT_EQ(Ok({"-t", "90:30", Script(kPlain)}).time_limit, 90 * 60 + 30);
  EXPECT_EQ(Ok({"-t", "36:00:00", Script(kPlain)}).time_limit, 36 * 3600);
  EXPECT_EQ(Ok({"-t", "1-12", Script(kPlain)}).time_limit, 36 * 3600);
  EXPECT_EQ(Ok({"-t", "UNLIMITED", Script(kPlain)}).time_limit, kUnlimited);
  EXPECT_EQ(Ok({"-t", "0", Script(kPlain)}).time_limit, kUnlimited);  // sbatch(1): no limit
  EXPECT_EQ(Ok({Script(kPlain)}).time_limit, 0);                      // partition default
}

TEST_F(SbatchCommandLineTest, NodeRange) {
  JobSpec s = Ok({"-N", "2-4", Script(kPlain)});
  EXPECT_EQ(s.min_nodes, 2);
  EXPECT_EQ(s.max_nodes, 4);
}

TEST_F(SbatchCommandLineTest, MemorySizes) {
  EXPECT_EQ(Ok({"--mem=4096", Script(kPlain)}).mem_mb, 4096);
  EXPECT_EQ(Ok({"--mem=1T", Script(kPlain)}).mem_mb, 1048576);
  EXPECT_EQ(Ok({"--mem=32Gb", Script(kPlain)}).mem_mb, 32768);  // Slurm reads "32Gb" as 32G
  EXPECT_EQ(Ok({"--mem-per-gpu=80GB", Script(kPlain)}).mem_per_gpu_mb, 81920);
}

TEST_F(SbatchCommandLineTest, GpuOptions) {
  JobSpec s = Ok({"--gpus-per-node=4", "--gpus-per-task=1", "-n", "8", Script(kPlain)});
  EXPECT_EQ(s.gpus_per_node, 4);
  EXPECT_EQ(s.gpus_per_task, 1);
  EXPECT_EQ(s.gpu_type, "");
}

TEST_F(SbatchCommandLineTest, GresForms) {
  struct Case {
    const char* gres;
    std::int32_t count;
    const char* type;
  };
  for (const Case& c : {Case{"gpu:2", 2, ""}, Case{"gpu:a100:2", 2, "a100"}, Case{"gpu", 1, ""},
                        Case{"gpu:a100", 1, "a100"}, Case{"gres/gpu:3", 3, ""},
                        Case{"gpu:1g.10gb:7", 7, "1g.10gb"}}) {
    JobSpec s = Ok({std::string("--gres=") + c.gres, Script(kPlain)});
    EXPECT_EQ(s.gpus_per_node, c.count) << c.gres;
    EXPECT_EQ(s.gpu_type, c.type) << c.gres;
  }
}

TEST_F(SbatchCommandLineTest, FlagsAndNice) {
  EXPECT_FALSE(Ok({Script(kPlain)}).requeue.has_value());
  EXPECT_EQ(Ok({"--requeue", Script(kPlain)}).requeue, std::optional<bool>(true));
  EXPECT_EQ(Ok({"--requeue", "--no-requeue", Script(kPlain)}).requeue, std::optional<bool>(false));
  JobSpec s = Ok({"--exclusive", "--parsable", "--hold", "--nice", Script(kPlain)});
  EXPECT_TRUE(s.exclusive);
  EXPECT_TRUE(s.parsable);
  EXPECT_TRUE(s.hold);
  EXPECT_EQ(s.nice, 100);  // Slurm's default adjustment
  EXPECT_EQ(Ok({"--nice=-5", Script(kPlain)}).nice, -5);
  EXPECT_EQ(Ok({"--nice=10", Script(kPlain)}).nice, 10);
  EXPECT_FALSE(s.test_only);
  EXPECT_TRUE(Ok({"--test-only", Script(kPlain)}).test_only);
}

TEST_F(SbatchCommandLineTest, SwitchesWithAndWithoutWait) {
  JobSpec s = Ok({"--switches=2", Script(kPlain)});
  EXPECT_EQ(s.max_switches, 2);
  EXPECT_EQ(s.switches_wait, 0);
  EXPECT_EQ(Ok({"--switches=1@30", Script(kPlain)}).switches_wait, 1800);
}

TEST_F(SbatchCommandLineTest, WorkDirResolvedAgainstCwd) {
  EXPECT_EQ(Ok({Script(kPlain)}).work_dir, "/home/alice/run");
  files["/home/alice/other/train.sbatch"] = kPlain;
  EXPECT_EQ(Ok({"-D", "../other/", "train.sbatch"}).work_dir, "/home/alice/other");
  files["/scratch/x/train.sbatch"] = kPlain;
  EXPECT_EQ(Ok({"--chdir=/scratch/x/", "train.sbatch"}).work_dir, "/scratch/x");
}

TEST_F(SbatchCommandLineTest, ScriptFoundFromCwdOrCommandLineChdir) {
  files["/home/alice/run/jobs/train.sbatch"] = kPlain;
  JobSpec s = Ok({"jobs/train.sbatch"});
  EXPECT_EQ(s.name, "train.sbatch");  // the file name, not the path
  EXPECT_EQ(read_paths.back(), "/home/alice/run/jobs/train.sbatch");
  files["/data/run.sh"] = kPlain;
  Ok({"-D", "/data", "run.sh"});
  EXPECT_EQ(read_paths.back(), "/data/run.sh");
  files["/abs/run.sh"] = kPlain;
  Ok({"-D", "/data", "/abs/run.sh"});
  EXPECT_EQ(read_paths.back(), "/abs/run.sh");
}

TEST_F(SbatchCommandLineTest, WrapMakesAShScript) {
  JobSpec s = Ok({"--wrap=srun hostname", "-N", "2"});
  EXPECT_EQ(s.script, "#!/bin/sh\nsrun hostname\n");
  EXPECT_EQ(s.name, "wrap");
  EXPECT_EQ(s.min_nodes, 2);
  EXPECT_TRUE(read_paths.empty());
  EXPECT_EQ(Ok({"--wrap", "echo a b", "-J", "w"}).name, "w");
}

TEST_F(SbatchCommandLineTest, WrapWithAScriptIsAnError) {
  EXPECT_EQ(Error({"--wrap=hostname", "train.sbatch"}),
            "sbatch: a script ('train.sbatch') and its arguments are not allowed with --wrap");
}

TEST_F(SbatchCommandLineTest, ScriptFromStdin) {
  in.stdin_script = "#!/bin/sh\n#SBATCH -N 3\nhostname\n";
  JobSpec s = Ok({"-p", "cpu"});
  EXPECT_EQ(s.name, "sbatch");
  EXPECT_EQ(s.min_nodes, 3);
  EXPECT_EQ(s.script, in.stdin_script);
  in.stdin_script = "#SBATCH -N 3\n";
  EXPECT_EQ(Error({}),
            "sbatch: stdin line 1: This does not look like a batch script. The first "
            "line must start with #! followed by the path to an interpreter. For "
            "instance: #!/bin/sh");
}

TEST_F(SbatchCommandLineTest, IgnoredSlurmOptionsBecomeWarnings) {
  JobSpec s = Ok({"--mail-type=END", "--mail-user", "a@b.c", "-v", Script(kPlain)});
  ASSERT_EQ(s.warnings.size(), 3u);
  EXPECT_EQ(s.warnings[0], "sbatch: --mail-type has no effect in lockstep and is ignored");
  EXPECT_EQ(s.warnings[2], "sbatch: -v has no effect in lockstep and is ignored");
}

// lockstep defines no license: any name is refused in Slurm's words. A reservation's name is
// kept for lockstepd, which knows the reservations.
TEST_F(SbatchCommandLineTest, UndefinedLicensesAreRefusedAsSlurmDoesReservationsAreKept) {
  EXPECT_EQ(Parse({"--reservation=maint", Script(kPlain)})->reservation, "maint");
  EXPECT_EQ(Error({"-L", "matlab", Script(kPlain)}),
            "sbatch: Batch job submission failed: Invalid license specification");
}

// Slurm options lockstep's placement does not take are accepted with a warning that says so.
TEST_F(SbatchCommandLineTest, HintsWithoutEffectAreAcceptedWithAWarning) {
  JobSpec s = Ok({"--ntasks-per-gpu=4", "-B", "2:8:1", "--tmp=10G", "--uid=0", Script(kPlain)});
  ASSERT_EQ(s.warnings.size(), 4u);
  EXPECT_EQ(s.warnings[0], "sbatch: --ntasks-per-gpu has no effect in lockstep and is ignored");
  EXPECT_EQ(s.warnings[1], "sbatch: -B has no effect in lockstep and is ignored");
}

// -w and -x keep hostlists, compressed; their syntax is checked here, the names at submission.
TEST_F(SbatchCommandLineTest, NodelistAndExcludeAreHostlists) {
  JobSpec s = Ok({"-w", "gpu03,gpu01,gpu02", "--exclude=cpu[1-2]", Script(kPlain)});
  EXPECT_EQ(s.nodelist, "gpu[01-03]");
  EXPECT_EQ(s.exclude, "cpu[1-2]");
  EXPECT_EQ(Ok({"--nodelist=a1", Script(kPlain)}).nodelist, "a1");
  EXPECT_NE(Error({"-x", "node[1", Script(kPlain)}).find("sbatch: "), std::string::npos);
}

TEST_F(SbatchCommandLineTest, UnrecognizedOptions) {
  EXPECT_EQ(Error({"--bogus", Script(kPlain)}), "sbatch: unrecognized option '--bogus'");
  EXPECT_EQ(Error({"-z", Script(kPlain)}), "sbatch: unrecognized option '-z'");
  EXPECT_EQ(Error({"-J"}), "sbatch: option '-J' requires an argument");
  EXPECT_EQ(Error({"--time"}), "sbatch: option '--time' requires an argument");
  EXPECT_EQ(Error({"--hold=yes", Script(kPlain)}),
            "sbatch: option '--hold' doesn't allow an argument");
}

TEST_F(SbatchCommandLineTest, EmptyValues) {
  EXPECT_EQ(Error({"--job-name=", Script(kPlain)}), "sbatch: --job-name: the value is empty");
  EXPECT_EQ(Error({"-p", "", Script(kPlain)}), "sbatch: -p: the value is empty");
}

TEST_F(SbatchCommandLineTest, ExclusiveUserSharesNodesWithTheUsersOwnJobsOnly) {
  JobSpec s = Ok({"--exclusive=user", Script(kPlain)});
  EXPECT_TRUE(s.exclusive_user);
  EXPECT_FALSE(s.exclusive) << "not whole nodes";
  s = Ok({"--exclusive=user", "--exclusive", Script(kPlain)});
  EXPECT_TRUE(s.exclusive) << "the last one given wins";
  EXPECT_FALSE(s.exclusive_user);
  EXPECT_EQ(Error({"--exclusive=mcs", Script(kPlain)}),
            "sbatch: --exclusive: 'mcs' is not supported: lockstep has no MCS labels");
  EXPECT_EQ(Error({"--exclusive=foo", Script(kPlain)}),
            "sbatch: --exclusive: 'foo' is not a valid --exclusive specification (user or mcs)");
}

TEST_F(SbatchCommandLineTest, MissingScriptFileNamesIt) {
  Result<JobSpec> r = Parse({"missing.sh"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            "sbatch: unable to read the batch script 'missing.sh': /home/alice/run/missing.sh: "
            "No such file or directory");
}

TEST_F(SbatchCommandLineTest, OutputPatternsStayAsWritten) {
  JobSpec s = Ok({Script(kPlain)});
  EXPECT_EQ(s.output, "");  // DefaultOutputPattern applies
  EXPECT_EQ(s.error, "");
  EXPECT_EQ(Ok({"-o", "logs/%x_%A_%a.out", Script(kPlain)}).output, "logs/%x_%A_%a.out");
}

// --- ParseSrunArgs.

TEST(SbatchSrunTest, StopsAtTheCommand) {
  Result<SrunParse> r =
      ParseSrunArgs({"-n", "4", "--gpus-per-task=1", "python", "train.py", "-n", "2"},
                    {{"PATH", "/bin"}}, "/home/bob", kNow);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->command, (std::vector<std::string>{"python", "train.py", "-n", "2"}));
  EXPECT_EQ(r->spec.ntasks, 4);
  EXPECT_EQ(r->spec.gpus_per_task, 1);
  EXPECT_EQ(r->spec.name, "python");
  EXPECT_EQ(r->spec.work_dir, "/home/bob");
  EXPECT_EQ(r->spec.environment.at("PATH"), "/bin");
  EXPECT_EQ(r->spec.script, "");
}

TEST(SbatchSrunTest, DoubleDashAndNoCommand) {
  Result<SrunParse> r = ParseSrunArgs({"-N2", "--", "/usr/bin/env", "-i"}, {}, "/", kNow);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->command, (std::vector<std::string>{"/usr/bin/env", "-i"}));
  EXPECT_EQ(r->spec.name, "env");
  Result<SrunParse> none = ParseSrunArgs({"-N2"}, {}, "/", kNow);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->command.empty());
  EXPECT_EQ(none->spec.name, "interactive");
}

TEST(SbatchSrunTest, SbatchOnlyOptionsAreUnrecognized) {
  for (const char* opt : {"--wrap=x", "--array=1-2", "--parsable"}) {
    Result<SrunParse> r = ParseSrunArgs({opt, "hostname"}, {}, "/", kNow);
    ASSERT_FALSE(r.ok()) << opt;
    EXPECT_EQ(r.status().message().rfind("srun: unrecognized option '--", 0), 0u)
        << r.status().message();
  }
}

TEST(SbatchSrunTest, ErrorsSaySrun) {
  Result<SrunParse> r = ParseSrunArgs({"--time=1:99", "hostname"}, {}, "/", kNow);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("srun: --time: '1:99' is not a time", 0), 0u)
      << r.status().message();
}

TEST(SbatchSrunTest, SlurmEnvironmentBelowCommandLine) {
  const std::map<std::string, std::string> env = {
      {"SLURM_PARTITION", "debug"}, {"SLURM_TIMELIMIT", "10"}, {"SBATCH_PARTITION", "ignored"}};
  Result<SrunParse> r = ParseSrunArgs({"hostname"}, env, "/", kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->spec.partition, "debug");
  EXPECT_EQ(r->spec.time_limit, 600);
  r = ParseSrunArgs({"-p", "gpu", "hostname"}, env, "/", kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->spec.partition, "gpu");
}

}  // namespace
}  // namespace lockstep::jobspec
