#include "cli/format/sacct.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cli/format/format_test_data.h"
#include "cli/format/sacct_fields.h"

namespace lockstep::cli {
namespace {

// Golden outputs keep one report line a source line.
// clang-format off

using testdata::kNow;

// Accounting records (GET /api/v1/accounting): a finished job with its batch, extern and first
// srun step; a cancelled job whose name, partition and account overflow their columns; a failed
// job; a pending job; a running job; and a pending array.
nlohmann::json Accounting() {
  nlohmann::json jobs = nlohmann::json::parse(R"([
    {"job_id": 100, "name": "train", "user": "alice", "uid": 1000, "gid": 1000,
     "account": "llm", "partition": "gpu", "qos": "normal", "state": "COMPLETED",
     "reason": "None", "nodes": "gpu[001-002]", "node_count": 2, "cpus": 16, "gpus": 16,
     "mem_mb": 16384, "time_limit": 7200, "submit_time": 1764396300,
     "eligible_time": 1764396300, "start_time": 1764396400, "end_time": 1764400000,
     "priority": 5000, "exit_code": 0, "signal": 0, "work_dir": "/home/alice",
     "steps": [
       {"step_id": "batch", "name": "batch", "state": "COMPLETED", "exit_code": 0,
        "signal": 0, "start_time": 1764396400, "end_time": 1764400000, "nodes": "gpu001",
        "cpus": 8},
       {"step_id": "extern", "name": "extern", "state": "COMPLETED", "exit_code": 0,
        "signal": 0, "start_time": 1764396400, "end_time": 1764400000,
        "nodes": "gpu[001-002]"},
       {"step_id": 0, "name": "python", "state": "COMPLETED", "exit_code": 0, "signal": 0,
        "start_time": 1764396500, "end_time": 1764399900, "nodes": "gpu[001-002]",
        "node_count": 2, "tasks": 16}]},
    {"job_id": 101, "name": "a-very-long-job-name", "user": "bob", "uid": 1002,
     "account": "verylongaccount", "partition": "interactive", "state": "CANCELLED",
     "cancelled_by": 1000, "nodes": "cpu01", "node_count": 1, "cpus": 4,
     "time_limit": 600, "start_time": 1764403000, "end_time": 1764403300, "exit_code": 0,
     "signal": 15},
    {"job_id": 102, "name": "fail", "user": "bob", "account": "data", "partition": "cpu",
     "state": "FAILED", "nodes": "cpu02", "node_count": 1, "cpus": 1, "time_limit": 600,
     "start_time": 1764403000, "end_time": 1764403010, "exit_code": 1, "signal": 0},
    {"job_id": 103, "name": "pending", "user": "alice", "account": "llm", "partition": "gpu",
     "state": "PENDING", "reason": "Priority", "nodes": "", "node_count": 1, "cpus": 8,
     "time_limit": 3600, "submit_time": 1764403500, "start_time": 0, "end_time": 0,
     "exit_code": 0, "signal": 0},
    {"job_id": 104, "name": "interactive", "user": "alice", "account": "llm",
     "partition": "cpu", "state": "RUNNING", "nodes": "cpu01", "node_count": 1, "cpus": 2,
     "time_limit": null, "start_time": 1764403510, "end_time": 0, "exit_code": 0,
     "signal": 0}
  ])");
  jobs.push_back(testdata::Jobs()[2]);
  return jobs;
}

std::string Sacct(const nlohmann::json& jobs, SacctOptions options) {
  options.now = kNow;
  Result<std::string> out = FormatSacct(jobs, options);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : "";
}

// sacct's default report: JobID left-justified in 12, the rest right-justified in 10 (ExitCode
// in 8), every column followed by a space, strings too long for their column cut with a '+'.
TEST(Sacct, DefaultFormatGolden) {
  EXPECT_EQ(Sacct(Accounting(), {}),
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
            "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
            "100               train        gpu        llm         16  COMPLETED      0:0 \n"
            "100.batch         batch                   llm          8  COMPLETED      0:0 \n"
            "100.extern       extern                   llm         16  COMPLETED      0:0 \n"
            "100.0            python                   llm         16  COMPLETED      0:0 \n"
            "101          a-very-lo+ interacti+ verylonga+          4 CANCELLED+     0:15 \n"
            "102                fail        cpu       data          1     FAILED      1:0 \n"
            "103             pending        gpu        llm          8    PENDING      0:0 \n"
            "104          interacti+        cpu        llm          2    RUNNING      0:0 \n"
            "40_[3-10%2]  preproces+        cpu       data          2    PENDING      0:0 \n");
}

TEST(Sacct, FormatWithWidthsGolden) {
  SacctOptions options;
  options.format = "jobid%20,elapsed,start,end,nodel,nnodes,timelimit,cputime";
  options.allocations = false;
  nlohmann::json jobs = Accounting();
  nlohmann::json some = nlohmann::json::array({jobs[0], jobs[3], jobs[4]});
  some[0]["steps"].erase(1);
  EXPECT_EQ(Sacct(some, options),
            "               JobID    Elapsed               Start                 End        NodeList   NNodes  Timelimit    CPUTime \n"
            "-------------------- ---------- ------------------- ------------------- --------------- -------- ---------- ---------- \n"
            "                 100   01:00:00 2025-11-29T06:06:40 2025-11-29T07:06:40    gpu[001-002]        2   02:00:00   16:00:00 \n"
            "           100.batch   01:00:00 2025-11-29T06:06:40 2025-11-29T07:06:40          gpu001        1              08:00:00 \n"
            "               100.0   00:56:40 2025-11-29T06:08:20 2025-11-29T07:05:00    gpu[001-002]        2              15:06:40 \n"
            "                 103   00:00:00             Unknown             Unknown   None assigned        1   01:00:00   00:00:00 \n"
            "                 104   00:01:30 2025-11-29T08:05:10             Unknown           cpu01        1  UNLIMITED   00:03:00 \n");
}

TEST(Sacct, BriefAndAllocations) {
  SacctOptions options;
  options.brief = true;
  options.allocations = true;
  options.noheader = true;
  nlohmann::json jobs = Accounting();
  EXPECT_EQ(Sacct(nlohmann::json::array({jobs[0], jobs[1]}), options),
            "100           COMPLETED      0:0 \n"
            "101          CANCELLED+     0:15 \n");
}

TEST(Sacct, Parsable) {
  SacctOptions options;
  options.format = "JobID,State,ExitCode,Partition";
  options.parsable = SacctParsable::kNoTrailing;
  nlohmann::json jobs = Accounting();
  nlohmann::json two = nlohmann::json::array({jobs[0], jobs[1]});
  two[0].erase("steps");
  EXPECT_EQ(Sacct(two, options),
            "JobID|State|ExitCode|Partition\n"
            "100|COMPLETED|0:0|gpu\n"
            "101|CANCELLED by 1000|0:15|interactive\n");
  options.parsable = SacctParsable::kTrailing;
  options.delimiter = ",";
  options.noheader = true;
  EXPECT_EQ(Sacct(two, options),
            "100,COMPLETED,0:0,gpu,\n"
            "101,CANCELLED by 1000,0:15,interactive,\n");
}

// lockstep's FailureCause: the cause of the last run that did not complete, blank otherwise
// and on step lines; matched from a prefix like Slurm's fields.
TEST(Sacct, FailureCause) {
  SacctOptions options;
  options.format = "JobID,State,failurec%-6";
  options.parsable = SacctParsable::kNoTrailing;
  nlohmann::json jobs = Accounting();
  nlohmann::json two = nlohmann::json::array({jobs[0], jobs[1]});
  two[0].erase("steps");
  two[1].erase("steps");
  two[1]["failure"] = {{"cause", "cancelled"}, {"detail", "scancel"}, {"run", 0}};
  two[0]["failure"] = nullptr;
  EXPECT_EQ(Sacct(two, options),
            "JobID|State|FailureCause\n"
            "100|COMPLETED|\n"
            "101|CANCELLED by 1000|cancelled\n");
}

TEST(Sacct, MoreFields) {
  SacctOptions options;
  options.format = "jobidraw,user,uid,ntasks,reqtres,alloctres,qos,workdir%-12";
  options.parsable = SacctParsable::kNoTrailing;
  options.noheader = true;
  nlohmann::json jobs = Accounting();
  jobs[0]["steps"].erase(0);
  jobs[0]["steps"].erase(0);
  EXPECT_EQ(Sacct(nlohmann::json::array({jobs[0], jobs[3]}), options),
            "100|alice|1000||billing=16,cpu=16,gres/gpu=16,mem=16G,node=2|billing=16,cpu=16,gres/gpu=16,mem=16G,node=2|normal|/home/alice\n"
            "100.0|||16||billing=16,cpu=16,node=2||\n"
            "103|alice|0||billing=8,cpu=8,node=1|||\n");
}

// A left-justified width from "%-N", and numbers that never get cut.
TEST(Sacct, WidthsAndJustification) {
  SacctOptions options;
  options.format = "jobname%-6,alloccpus%2,state%4";
  options.allocations = true;
  nlohmann::json jobs = Accounting();
  EXPECT_EQ(Sacct(nlohmann::json::array({jobs[0]}), options),
            "JobNam Al Stat \n------ -- ---- \ntrain  16 COM+ \n");
}

TEST(Sacct, FieldLookup) {
  EXPECT_STREQ(FindSacctField("jobid")->name, "JobID");
  EXPECT_STREQ(FindSacctField("JOBIDRAW")->name, "JobIDRaw");
  EXPECT_STREQ(FindSacctField("elapsed")->name, "Elapsed");
  EXPECT_STREQ(FindSacctField("nodel")->name, "NodeList");
  EXPECT_STREQ(FindSacctField("maxrss")->name, "MaxRSS");
  EXPECT_EQ(FindSacctField("bogus"), nullptr);
  EXPECT_EQ(FindSacctField(""), nullptr);
}

// Slurm 22.05's table order decides abbreviations: "p" is Partition, "pri" Priority, and
// a prefix of ALL is every field (options.c tests it first).
TEST(Sacct, AbbreviationsFollowSlurmsTableOrder) {
  EXPECT_STREQ(FindSacctField("p")->name, "Partition");
  EXPECT_STREQ(FindSacctField("pri")->name, "Priority");
  EXPECT_STREQ(FindSacctField("reqcpufreq")->name, "ReqCPUFreq");
  EXPECT_STREQ(FindSacctField("reqcpufreqm")->name, "ReqCPUFreqMax");
  EXPECT_STREQ(FindSacctField("systemc")->name, "SystemComment");
  EXPECT_STREQ(FindSacctField("submitl")->name, "SubmitLine");
  EXPECT_STREQ(FindSacctField("tresusageoutmaxn")->name, "TRESUsageOutMaxNode");
  SacctOptions options;
  options.format = "a";
  options.parsable = SacctParsable::kNoTrailing;
  options.allocations = true;
  const std::string all = Sacct(nlohmann::json::array({Accounting()[0]}), options);
  EXPECT_EQ(all.substr(0, all.find('|')), "Account");
  EXPECT_EQ(std::count(all.begin(), all.begin() + all.find('\n'), '|') + 1,
            static_cast<long>(AllSacctFields().size()));
}

// sacct -e: every name padded to 19, four to a line, as _help_fields_msg prints them.
TEST(Sacct, HelpFormatListsEveryFieldFourToALine) {
  const std::string help = SacctHelpFormat();
  EXPECT_EQ(help.substr(0, help.find('\n') + 1),
            "Account             AdminComment        AllocCPUS           AllocNodes         \n");
  EXPECT_NE(help.find("\nSubmitLine          Suspended           SystemComment       SystemCPU"),
            std::string::npos);
  EXPECT_EQ(std::count(help.begin(), help.end(), '\n'),
            static_cast<long>((AllSacctFields().size() + 3) / 4));
}

// -l: Slurm's LONG_FIELDS, after -o's and -b's fields when given with them.
TEST(Sacct, LongFormat) {
  SacctOptions options;
  options.long_format = true;
  options.parsable = SacctParsable::kNoTrailing;
  options.allocations = true;
  const std::string out = Sacct(nlohmann::json::array({Accounting()[0]}), options);
  EXPECT_EQ(out.substr(0, out.find('\n')),
            "JobID|JobIDRaw|JobName|Partition|MaxVMSize|MaxVMSizeNode|MaxVMSizeTask|AveVMSize|"
            "MaxRSS|MaxRSSNode|MaxRSSTask|AveRSS|MaxPages|MaxPagesNode|MaxPagesTask|AvePages|"
            "MinCPU|MinCPUNode|MinCPUTask|AveCPU|NTasks|AllocCPUS|Elapsed|State|ExitCode|"
            "AveCPUFreq|ReqCPUFreqMin|ReqCPUFreqMax|ReqCPUFreqGov|ReqMem|ConsumedEnergy|"
            "MaxDiskRead|MaxDiskReadNode|MaxDiskReadTask|AveDiskRead|MaxDiskWrite|"
            "MaxDiskWriteNode|MaxDiskWriteTask|AveDiskWrite|ReqTRES|AllocTRES|TRESUsageInAve|"
            "TRESUsageInMax|TRESUsageInMaxNode|TRESUsageInMaxTask|TRESUsageInMin|"
            "TRESUsageInMinNode|TRESUsageInMinTask|TRESUsageInTot|TRESUsageOutMax|"
            "TRESUsageOutMaxNode|TRESUsageOutMaxTask|TRESUsageOutAve|TRESUsageOutTot");
  options.long_format = false;
  options.brief = true;
  options.format = "jobname";
  options.noheader = true;
  EXPECT_EQ(Sacct(nlohmann::json::array({Accounting()[0]}), options), "train|100|COMPLETED|0:0\n");
}

TEST(Sacct, SubmitLine) {
  SacctOptions options;
  options.format = "jobid,submitline%-40";
  options.allocations = true;
  options.noheader = true;
  nlohmann::json job = Accounting()[0];
  job["submit_line"] = "sbatch -N2 --gres=gpu:8 train.sh";
  EXPECT_EQ(Sacct(nlohmann::json::array({job}), options),
            "100          sbatch -N2 --gres=gpu:8 train.sh         \n");
  job["submit_line"] = "sbatch --wrap=$'a\x1b[2Jb'";
  EXPECT_EQ(Sacct(nlohmann::json::array({job}), options).find('\x1b'), std::string::npos)
      << "control characters are escaped";
}

TEST(Sacct, UnknownToTheApiPrintsBlank) {
  SacctOptions options;
  options.format = "jobid,maxrss";
  options.allocations = true;
  options.noheader = true;
  EXPECT_EQ(Sacct(nlohmann::json::array({Accounting()[0]}), options), "100                     \n");
}

TEST(Sacct, Errors) {
  SacctOptions options;
  options.format = "jobid,bogus";
  EXPECT_EQ(FormatSacct(Accounting(), options).status().code(), StatusCode::kInvalidArgument);
  options.format = "jobid%x";
  EXPECT_FALSE(FormatSacct(Accounting(), options).ok());
  options.format = ",,";
  EXPECT_FALSE(FormatSacct(Accounting(), options).ok());
  options.format = "";
  EXPECT_FALSE(FormatSacct(nlohmann::json("text"), options).ok());
  nlohmann::json bad = nlohmann::json::array({Accounting()[0]});
  bad[0]["steps"].push_back(3);
  EXPECT_FALSE(FormatSacct(bad, options).ok());
}

// clang-format on

}  // namespace
}  // namespace lockstep::cli
