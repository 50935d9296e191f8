// #SBATCH lines, script checks, and the precedence of command line, environment and script.
#include <gtest/gtest.h>

#include "jobspec/sbatch.h"
#include "jobspec/sbatch_test_util.h"

namespace lockstep::jobspec {
namespace {

using testing::SbatchFixture;

class SbatchScriptTest : public SbatchFixture {};

TEST_F(SbatchScriptTest, EveryOptionAsADirective) {
  const std::string script =
      "#!/bin/bash\n"
      "#SBATCH --job-name=train\n"
      "#SBATCH -p gpu\n"
      "#SBATCH -N 2-4\n"
      "#SBATCH --ntasks=16\n"
      "#SBATCH --ntasks-per-node 8\n"
      "#SBATCH -c 4\n"
      "#SBATCH --mem-per-gpu=40G\n"
      "#SBATCH --gres=gpu:h100:8\n"
      "#SBATCH --time=2-00:00:00\n"
      "#SBATCH -o logs/%x-%j.out\n"
      "#SBATCH -e logs/%x-%j.err\n"
      "#SBATCH --array=0-9%2\n"
      "#SBATCH --dependency=afterok:11\n"
      "#SBATCH --requeue\n"
      "#SBATCH -q high\n"
      "#SBATCH -A ml\n"
      "#SBATCH --exclusive\n"
      "#SBATCH --hold\n"
      "#SBATCH --begin=now+10minutes\n"
      "#SBATCH --parsable\n"
      "#SBATCH --chdir=/scratch/alice\n"
      "#SBATCH --export=NONE\n"
      "#SBATCH --switches=1@5\n"
      "#SBATCH -C nvlink\n"
      "#SBATCH --nice=50\n"
      "#SBATCH --container-image=pytorch:24.01\n"
      "srun python train.py\n";
  files["/home/alice/run/train.sbatch"] = script;
  in.env = {{"HOME", "/home/alice"}, {"SLURM_CONF", "/etc/slurm.conf"}};
  JobSpec s = Ok({"train.sbatch", "--epochs", "3"});
  EXPECT_EQ(s.name, "train");
  EXPECT_EQ(s.partition, "gpu");
  EXPECT_EQ(s.min_nodes, 2);
  EXPECT_EQ(s.max_nodes, 4);
  EXPECT_EQ(s.ntasks, 16);
  EXPECT_EQ(s.ntasks_per_node, 8);
  EXPECT_EQ(s.cpus_per_task, 4);
  EXPECT_EQ(s.mem_per_gpu_mb, 40960);
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_EQ(s.gpu_type, "h100");
  EXPECT_EQ(s.time_limit, 2 * 86400);
  EXPECT_EQ(s.output, "logs/%x-%j.out");
  EXPECT_EQ(s.error, "logs/%x-%j.err");
  ASSERT_TRUE(s.array.has_value());
  EXPECT_EQ(s.array->indices.size(), 10u);
  EXPECT_EQ(s.array->max_running, 2u);
  EXPECT_EQ(s.dependencies[0].type, DependencyType::kAfterOk);
  EXPECT_EQ(s.requeue, std::optional<bool>(true));
  EXPECT_EQ(s.qos, "high");
  EXPECT_EQ(s.account, "ml");
  EXPECT_TRUE(s.exclusive);
  EXPECT_TRUE(s.hold);
  EXPECT_EQ(s.begin_time, testing::kNow + 600);
  EXPECT_TRUE(s.parsable);
  EXPECT_EQ(s.work_dir, "/scratch/alice");
  EXPECT_EQ(s.export_mode, "NONE");
  EXPECT_EQ(s.environment, (std::map<std::string, std::string>{{"SLURM_CONF", "/etc/slurm.conf"}}));
  EXPECT_EQ(s.max_switches, 1);
  EXPECT_EQ(s.switches_wait, 300);
  EXPECT_EQ(s.constraint, "nvlink");
  EXPECT_EQ(s.nice, 50);
  EXPECT_EQ(s.container_image, "pytorch:24.01");
  EXPECT_EQ(s.script, script);
  EXPECT_EQ(s.script_args, (std::vector<std::string>{"--epochs", "3"}));
}

TEST_F(SbatchScriptTest, SeveralOptionsOnOneLine) {
  JobSpec s = Ok({Script("#!/bin/sh\n#SBATCH -N 2 -n 8 --time=10\nhostname\n")});
  EXPECT_EQ(s.min_nodes, 2);
  EXPECT_EQ(s.ntasks, 8);
  EXPECT_EQ(s.time_limit, 600);
}

TEST_F(SbatchScriptTest, QuotesCommentsAndNoExpansion) {
  JobSpec s =
      Ok({Script("#!/bin/sh\n"
                 "#SBATCH --job-name=\"my job\"   # a comment\n"
                 "#SBATCH --comment 'two words'\n"
                 "#SBATCH -o $HOME/out#1.txt\n"
                 "#SBATCH --constraint=a\\ b\n"
                 "#SBATCH\n"
                 "hostname\n")});
  EXPECT_EQ(s.name, "my job");
  EXPECT_EQ(s.output, "$HOME/out#1.txt");  // no expansion; '#' inside a word is text
  EXPECT_EQ(s.constraint, "a b");
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0],
            "sbatch: train.sbatch line 3: #SBATCH --comment has no effect in lockstep and is "
            "ignored");
}

TEST_F(SbatchScriptTest, StopsAtTheFirstCommand) {
  JobSpec s =
      Ok({Script("#!/bin/bash\n"
                 "#SBATCH -N 2\n"
                 "\n"
                 "# a comment\n"
                 "   # an indented comment\n"
                 "#SBATCH -n 4\n"
                 "module load cuda\n"
                 "#SBATCH -N 8\n")});
  EXPECT_EQ(s.min_nodes, 2);
  EXPECT_EQ(s.ntasks, 4);
}

TEST_F(SbatchScriptTest, OnlyColumnOneSbatchIsADirective) {
  JobSpec s = Ok({Script("#!/bin/bash\n  #SBATCH -N 4\n#SBATCH-N 5\n#sbatch -N 6\nhostname\n")});
  EXPECT_EQ(s.min_nodes, 0);
}

TEST_F(SbatchScriptTest, ScriptMustStartWithShebang) {
  EXPECT_EQ(Error({Script("#SBATCH -N 2\nhostname\n")}),
            "sbatch: train.sbatch line 1: This does not look like a batch script. The first "
            "line must start with #! followed by the path to an interpreter. For instance: "
            "#!/bin/sh");
}

TEST_F(SbatchScriptTest, ScriptChecks) {
  EXPECT_EQ(Error({Script("")}), "sbatch: train.sbatch: the batch script is empty");
  EXPECT_EQ(Error({Script(" \n\t\n")}),
            "sbatch: train.sbatch: the batch script contains only whitespace");
  EXPECT_EQ(Error({Script("#!/bin/sh\r\nhostname\r\n")}),
            "sbatch: train.sbatch line 1: the batch script contains DOS line breaks (\\r\\n) "
            "instead of UNIX line breaks (\\n)");
  EXPECT_EQ(Error({Script(std::string("#!/bin/sh\nab\0c\n", 15))}),
            "sbatch: train.sbatch line 2: the batch script contains a NUL character; is it a "
            "binary file?");
}

// The script reaches the node as JSON text: a Latin-1 one would run with U+FFFD in place of
// its bytes, so it is refused, naming the line and the byte.
TEST_F(SbatchScriptTest, AScriptThatIsNotUtf8IsRefusedNamingWhere) {
  EXPECT_EQ(Error({Script("#!/bin/sh\n# caf\xe9\nhostname\n")}),
            "sbatch: train.sbatch line 2: the batch script is not UTF-8 (byte 0xe9 at offset 15); "
            "convert it, e.g. with iconv -f LATIN1 -t UTF-8");
}

TEST_F(SbatchScriptTest, AUtf8ScriptIsKeptByteForByte) {
  const std::string text =
      "#!/bin/sh\n# caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80\necho \"\xc3\xa9\"\n";
  JobSpec s = Ok({Script(text)});
  EXPECT_EQ(s.script, text);
  Result<JobSpec> stored = JobSpecFromJson(JobSpecToJson(s));  // the API's body, the store's
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->script, text);
}

TEST_F(SbatchScriptTest, UnknownDirectiveNamesTheLine) {
  EXPECT_EQ(Error({Script("#!/bin/sh\n#SBATCH -N 2\n#SBATCH --bogus=1\n")}),
            "sbatch: train.sbatch line 3: #SBATCH: unrecognized option '--bogus'");
  EXPECT_EQ(Error({Script("#!/bin/sh\n#SBATCH -N 2 extra\n")}),
            "sbatch: train.sbatch line 2: #SBATCH: unexpected argument 'extra'");
  EXPECT_EQ(Error({Script("#!/bin/sh\n#SBATCH -J \"open\n")}),
            "sbatch: train.sbatch line 2: #SBATCH: unterminated double quote");
  EXPECT_EQ(Error({Script("#!/bin/sh\n#SBATCH --time\n")}),
            "sbatch: train.sbatch line 2: #SBATCH: option '--time' requires an argument");
  EXPECT_EQ(Error({Script("#!/bin/sh\n#SBATCH --licenses=a1\n")}),
            "sbatch: train.sbatch line 2: #SBATCH --licenses: Batch job submission failed: "
            "Invalid license specification");
}

TEST_F(SbatchScriptTest, BadValueNamesTheLine) {
  const std::string m = Error({Script("#!/bin/sh\n#SBATCH -N 2\n\n#SBATCH --time=1:99\n")});
  EXPECT_EQ(m.rfind("sbatch: train.sbatch line 4: #SBATCH --time: '1:99' is not a time", 0), 0u)
      << m;
  EXPECT_EQ(Error({Script("#!/bin/sh\n#SBATCH -G x\n")}),
            "sbatch: train.sbatch line 2: #SBATCH -G: 'x' is not a GPU count");
}

TEST_F(SbatchScriptTest, WrapIsNotADirective) {
  EXPECT_EQ(Error({Script("#!/bin/sh\n#SBATCH --wrap=hostname\n")}),
            "sbatch: train.sbatch line 2: #SBATCH --wrap: is only allowed on the command line");
}

class SbatchPrecedenceTest : public SbatchFixture {};

TEST_F(SbatchPrecedenceTest, CommandLineOverEnvironmentOverScript) {
  const std::string name = Script("#!/bin/sh\n#SBATCH -J from-script\n#SBATCH -t 5\n");
  EXPECT_EQ(Ok({name}).name, "from-script");
  in.env["SBATCH_JOB_NAME"] = "from-env";
  EXPECT_EQ(Ok({name}).name, "from-env");
  EXPECT_EQ(Ok({"-J", "from-cli", name}).name, "from-cli");
  in.env["SBATCH_TIMELIMIT"] = "7";
  EXPECT_EQ(Ok({name}).time_limit, 420);
  EXPECT_EQ(Ok({"-t", "9", name}).time_limit, 540);
}

TEST_F(SbatchPrecedenceTest, EachEnvironmentVariable) {
  struct Case {
    const char* var;
    const char* value;
    std::function<bool(const JobSpec&)> check;
  };
  const std::vector<Case> cases = {
      {"SBATCH_PARTITION", "gpu", [](const JobSpec& s) { return s.partition == "gpu"; }},
      {"SBATCH_ACCOUNT", "ml", [](const JobSpec& s) { return s.account == "ml"; }},
      {"SBATCH_QOS", "high", [](const JobSpec& s) { return s.qos == "high"; }},
      {"SBATCH_TIMELIMIT", "1:00:00", [](const JobSpec& s) { return s.time_limit == 3600; }},
      {"SBATCH_OUTPUT", "o.txt", [](const JobSpec& s) { return s.output == "o.txt"; }},
      {"SBATCH_ERROR", "e.txt", [](const JobSpec& s) { return s.error == "e.txt"; }},
      {"SBATCH_ARRAY_INX", "1-3", [](const JobSpec& s) { return s.array->indices.size() == 3; }},
      {"SBATCH_GPUS", "a100:2",
       [](const JobSpec& s) { return s.gpus == 2 && s.gpu_type == "a100"; }},
      {"SBATCH_GPUS_PER_NODE", "4", [](const JobSpec& s) { return s.gpus_per_node == 4; }},
      {"SBATCH_GRES", "gpu:2", [](const JobSpec& s) { return s.gpus_per_node == 2; }},
      {"SBATCH_MEM_PER_NODE", "8G", [](const JobSpec& s) { return s.mem_mb == 8192; }},
      {"SBATCH_MEM_PER_CPU", "1G", [](const JobSpec& s) { return s.mem_per_cpu_mb == 1024; }},
      {"SBATCH_MEM_PER_GPU", "2G", [](const JobSpec& s) { return s.mem_per_gpu_mb == 2048; }},
      {"SBATCH_EXCLUSIVE", "", [](const JobSpec& s) { return s.exclusive; }},
      {"SBATCH_REQUEUE", "1", [](const JobSpec& s) { return s.requeue == true; }},
      {"SBATCH_NO_REQUEUE", "1", [](const JobSpec& s) { return s.requeue == false; }},
      {"SBATCH_EXPORT", "NONE", [](const JobSpec& s) { return s.export_mode == "NONE"; }},
      {"SBATCH_CONSTRAINT", "ib", [](const JobSpec& s) { return s.constraint == "ib"; }},
      {"SBATCH_REQ_SWITCH", "2", [](const JobSpec& s) { return s.max_switches == 2; }},
      {"SBATCH_WAIT4SWITCH", "10", [](const JobSpec& s) { return s.switches_wait == 600; }},
  };
  const std::string name = Script("#!/bin/sh\nhostname\n");
  for (const Case& c : cases) {
    in.env = {{c.var, c.value}};
    JobSpec s = Ok({name});
    EXPECT_TRUE(c.check(s)) << c.var;
  }
}

TEST_F(SbatchPrecedenceTest, EmptyEnvironmentValuesAreSkipped) {
  in.env = {{"SBATCH_PARTITION", ""}};
  EXPECT_EQ(Ok({Script("#!/bin/sh\n#SBATCH -p cpu\n")}).partition, "cpu");
}

TEST_F(SbatchPrecedenceTest, EnvironmentErrorsNameTheVariable) {
  in.env = {{"SBATCH_GPUS", "x"}};
  EXPECT_EQ(Error({Script("#!/bin/sh\n")}), "sbatch: SBATCH_GPUS: 'x' is not a GPU count");
}

TEST_F(SbatchPrecedenceTest, RepeatedOptionLastWins) {
  EXPECT_EQ(Ok({"-t", "5", "--time=10", Script("#!/bin/sh\n")}).time_limit, 600);
}

TEST_F(SbatchPrecedenceTest, ABadScriptValueIsAnErrorEvenWhenOverridden) {
  // As in Slurm, which reads the script's directives before the command line.
  const std::string m = Error({"-t", "10", Script("#!/bin/sh\n#SBATCH -t 1:99\n")});
  EXPECT_EQ(m.rfind("sbatch: train.sbatch line 2: #SBATCH -t: '1:99' is not a time", 0), 0u) << m;
}

TEST_F(SbatchPrecedenceTest, MemoryOptionsAreOneGroup) {
  // A higher place replaces the whole group...
  JobSpec s = Ok({"--mem-per-cpu=1G", Script("#!/bin/sh\n#SBATCH --mem=4G\n")});
  EXPECT_EQ(s.mem_mb, 0);
  EXPECT_EQ(s.mem_per_cpu_mb, 1024);
  // ...and two members in one place are an error.
  EXPECT_EQ(Error({"--mem=4G", "--mem-per-cpu=1G", Script("#!/bin/sh\n")}),
            "sbatch: --mem=4G and --mem-per-cpu=1G are mutually exclusive");
  EXPECT_EQ(Error({Script("#!/bin/sh\n#SBATCH --mem=4G\n#SBATCH --mem-per-gpu=1G\n")}),
            "sbatch: #SBATCH --mem=4G (train.sbatch line 2) and #SBATCH --mem-per-gpu=1G "
            "(train.sbatch line 3) are mutually exclusive");
}

TEST_F(SbatchPrecedenceTest, GresGpuAndGpusPerNodeAreOneGroup) {
  EXPECT_EQ(Error({"--gres=gpu:2", "--gpus-per-node=4", Script("#!/bin/sh\n")}),
            "sbatch: --gres=gpu:2 and --gpus-per-node=4 are mutually exclusive");
  JobSpec s = Ok({"--gpus-per-node=4", Script("#!/bin/sh\n#SBATCH --gres=gpu:a100:8\n")});
  EXPECT_EQ(s.gpus_per_node, 4);
  EXPECT_EQ(s.gpu_type, "");  // the script's typed --gres was replaced
}

// ---- Heterogeneous jobs ----

TEST_F(SbatchScriptTest, HetjobLinesMakeComponentsThatTakeWhatSlurmPropagates) {
  const std::string name = Script(
      "#!/bin/bash\n"
      "#SBATCH -N1 -n2 -J lead --mem=100 -t 5 -x n4 --nice=5 -o out-%j.txt\n"
      "#SBATCH hetjob\n"
      "#SBATCH -N2 -n4 -p other\n"
      "#SBATCH packjob\n"
      "#SBATCH -n1 -J third --mem-per-cpu=10\n"
      "srun hostname\n");
  JobSpec s = Ok({name});
  ASSERT_EQ(s.het_components.size(), 2u);
  EXPECT_EQ(s.min_nodes, 1);
  EXPECT_EQ(s.ntasks, 2);
  EXPECT_FALSE(s.script.empty());
  const JobSpec& second = s.het_components[0];
  EXPECT_EQ(second.min_nodes, 2);
  EXPECT_EQ(second.ntasks, 4);
  EXPECT_EQ(second.partition, "other") << "--partition is not propagated";
  EXPECT_EQ(second.name, "lead");
  EXPECT_EQ(second.mem_mb, 100);
  EXPECT_EQ(second.time_limit, 300);
  EXPECT_EQ(second.exclude, "n4");
  EXPECT_EQ(second.nice, 5);
  EXPECT_EQ(second.output, "out-%j.txt");
  EXPECT_TRUE(second.script.empty()) << "the script runs in the first component only";
  const JobSpec& third = s.het_components[1];
  EXPECT_EQ(third.name, "third");
  EXPECT_EQ(third.mem_mb, 0) << "its own --mem-per-cpu replaces the propagated --mem";
  EXPECT_EQ(third.mem_per_cpu_mb, 10);
  EXPECT_EQ(third.partition, "");
  EXPECT_EQ(third.min_nodes, 0) << "sizes are not propagated";
}

TEST_F(SbatchScriptTest, ColonSeparatesComponentsOnTheCommandLine) {
  const std::string name = Script("#!/bin/bash\nsrun hostname\n");
  JobSpec s = Ok({"-n2", "-J", "x", ":", "-N2", "--gres=gpu:1", name, ":", "arg"});
  ASSERT_EQ(s.het_components.size(), 1u);
  EXPECT_EQ(s.ntasks, 2);
  EXPECT_EQ(s.het_components[0].min_nodes, 2);
  EXPECT_EQ(s.het_components[0].gpus_per_node, 1);
  EXPECT_EQ(s.het_components[0].name, "x");
  EXPECT_EQ(s.script_args, (std::vector<std::string>{":", "arg"}))
      << "a colon after the script is the script's argument";
}

TEST_F(SbatchScriptTest, HetjobRefusesComponentsInTwoPlacesAndArraysAndRunsAnyWrap) {
  const std::string name = Script("#!/bin/bash\n#SBATCH -n1\n#SBATCH hetjob\n#SBATCH -n2\nhostname\n");
  EXPECT_NE(Error({"-n1", ":", "-n2", name}).find("both on the command line"), std::string::npos);
  EXPECT_NE(Error({"--array=1-2", name}).find("cannot be a job array"), std::string::npos);
  JobSpec wrapped = Ok({"-n1", ":", "-n2", "--wrap", "true"});
  EXPECT_NE(wrapped.script.find("true"), std::string::npos) << "the leader runs --wrap's script";
  ASSERT_EQ(wrapped.het_components.size(), 1u);
  EXPECT_TRUE(wrapped.het_components[0].script.empty());
  std::string many = "#!/bin/bash\n";
  for (int i = 0; i < 128; ++i) many += "#SBATCH -n1\n#SBATCH hetjob\n";
  many += "hostname\n";
  EXPECT_NE(Error({Script(many, "many.sh")}).find("at most 128 components"), std::string::npos);
}

TEST_F(SbatchScriptTest, HetComponentsSurviveTheJsonRoundTrip) {
  const std::string name = Script("#!/bin/bash\n#SBATCH -n1\n#SBATCH hetjob\n#SBATCH -n3 -N2\nhostname\n");
  JobSpec s = Ok({name});
  Result<JobSpec> back = JobSpecFromJson(JobSpecToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
  Result<JobSpec> nested = JobSpecFromJson(
      R"({"het_components": [{"het_components": [{}]}]})");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.status().message().find("not nested"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::jobspec
