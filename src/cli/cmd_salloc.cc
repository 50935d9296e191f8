// salloc: an allocation (a job that holds its nodes), then a command (the user's shell by
// default) run here with the allocation's SLURM_* variables, so that srun inside it starts
// steps in the allocation; released when the command ends, and salloc exits with its code.
//
// The allocation's job runs a shell that waits until salloc sends it SIGTERM, and then ends
// COMPLETED. Ctrl-C belongs to the command while it runs (salloc ignores it, as Slurm's does);
// while the job still pends, Ctrl-C withdraws it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "jobspec/sbatch.h"

namespace lockstep::cli {
namespace {

// What the allocation's job runs: nothing, until salloc's SIGTERM ends it with success.
constexpr const char* kHoldScript =
    "#!/bin/sh\n"
    "# salloc's allocation: held until salloc releases it\n"
    "trap 'exit 0' TERM\n"
    "while :; do sleep 60 & wait $!; done\n";

volatile sig_atomic_t g_interrupted = 0;
void OnInterrupt(int) { g_interrupted = 1; }

// The allocation's variables, as Slurm's salloc sets them.
std::map<std::string, std::string> AllocationEnv(const nlohmann::json& job,
                                                 const jobspec::JobSpec& spec) {
  const std::string id = std::to_string(job["job_id"].get<unsigned long long>());
  const std::string nodes = job.value("nodes", "");
  const std::string count = std::to_string(job.value("node_count", 1));
  std::map<std::string, std::string> env = {
      {"SLURM_JOB_ID", id},          {"SLURM_JOBID", id},
      {"SLURM_JOB_NODELIST", nodes}, {"SLURM_NODELIST", nodes},
      {"SLURM_JOB_NUM_NODES", count}, {"SLURM_NNODES", count},
      {"SLURM_JOB_NAME", job.value("name", "")},
      {"SLURM_JOB_PARTITION", job.value("partition", "")},
      {"SLURM_SUBMIT_DIR", CurrentDir()},
  };
  if (spec.ntasks > 0) env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = std::to_string(spec.ntasks);
  // Every node of a lockstep allocation gives the job the same CPUs: "8(x2)".
  const int node_count = std::max(1, job.value("node_count", 1));
  const std::string per_node = std::to_string(job.value("cpus", 0) / node_count);
  env["SLURM_JOB_CPUS_PER_NODE"] =
      node_count == 1 ? per_node : per_node + "(x" + std::to_string(node_count) + ")";
  if (spec.cpus_per_gpu > 0) env["SLURM_CPUS_PER_GPU"] = std::to_string(spec.cpus_per_gpu);
  return env;
}

// Runs `command` with `env` added; its exit code (128 + signal when killed).
int RunCommand(const std::vector<std::string>& command,
               const std::map<std::string, std::string>& env) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGQUIT, SIG_DFL);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& w : command) argv.push_back(const_cast<char*>(w.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "salloc: error: %s: cannot run it\n", command.front().c_str());
    ::_exit(127);
  }
  if (pid < 0) return Fail("salloc", "fork failed");
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Waits for the job to run; its JSON, or an error (cancelled by Ctrl-C, ended before it ran).
Result<nlohmann::json> AwaitAllocation(client::ApiClient& api, unsigned long long job) {
  const std::string where = "/api/v1/jobs/" + std::to_string(job);
  bool announced = false;
  // Slurm says "queued" only when the controller could not start the job at once; lockstepd
  // starts it at its next pass, so only a job still pending after a second is announced.
  const auto quiet_until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (true) {
    if (g_interrupted) {
      (void)api.Post(where + "/cancel", {{"signal", 0}});
      return FailedPrecondition("Job allocation " + std::to_string(job) + " has been revoked.");
    }
    Result<nlohmann::json> j = api.Get(where);
    if (!j.ok()) return j.status();
    const std::string state = (*j)["state"];
    if (state == "RUNNING") return j;
    if (state != "PENDING")
      return FailedPrecondition("job " + std::to_string(job) + " ended " + state + " before it ran");
    if (!announced && std::chrono::steady_clock::now() > quiet_until) {
      std::fprintf(stderr, "salloc: job %llu queued and waiting for resources\n", job);
      announced = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the user's wait, polled
  }
}

// A heterogeneous allocation's variables, as Slurm 22.05's salloc sets them: the leader's id,
// the task count of all, and each component's own under _HET_GROUP_<n> (and _PACK_GROUP_<n>).
Result<std::map<std::string, std::string>> HetAllocationEnv(client::ApiClient& api,
                                                            unsigned long long leader,
                                                            const jobspec::JobSpec& spec) {
  Result<nlohmann::json> list =
      api.Get("/api/v1/jobs?all=1&job=" + std::to_string(leader));
  if (!list.ok()) return list.status();
  std::vector<const jobspec::JobSpec*> specs = {&spec};
  for (const jobspec::JobSpec& c : spec.het_components) specs.push_back(&c);
  std::map<std::string, std::string> env = {
      {"SLURM_JOB_ID", std::to_string(leader)},
      {"SLURM_HET_SIZE", std::to_string(specs.size())},
      {"SLURM_PACK_SIZE", std::to_string(specs.size())},
      {"SLURM_SUBMIT_DIR", CurrentDir()},
  };
  std::int64_t ntasks = 0;
  for (const nlohmann::json& job : (*list)["jobs"]) {
    const std::size_t offset = job.value("het_job_offset", std::size_t{0});
    if (job.value("het_job_id", 0ull) != leader || offset >= specs.size()) continue;
    const std::string suffix = std::to_string(offset);
    for (const auto& [k, v] : AllocationEnv(job, *specs[offset])) {
      if (k == "SLURM_SUBMIT_DIR") continue;
      env[k + "_HET_GROUP_" + suffix] = v;
      env[k + "_PACK_GROUP_" + suffix] = v;
    }
    ntasks += std::max(specs[offset]->ntasks, 1);
  }
  env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = std::to_string(ntasks);
  return env;
}

}  // namespace

int RunSalloc(int argc, char** argv) {
  std::vector<std::string> args = Args(argc, argv);
  if (std::optional<int> rc = SbatchHelpRequested(args, "salloc")) return *rc;
  std::map<std::string, std::string> env = Environment();
  Result<std::vector<jobspec::SrunParse>> parts =
      jobspec::ParseSrunComponents(args, env, CurrentDir(), std::time(nullptr), ReadTextFile);
  if (!parts.ok()) return FailOptions("salloc", parts.status());
  jobspec::SrunParse* p = &parts->back();  // the command, and salloc's own options
  for (const jobspec::SrunParse& part : *parts) PrintOptionWarnings(part.spec.warnings);
  if (p->spec.test_only) return Fail("salloc", "--test-only is an sbatch and srun option");
  std::vector<std::string> command = p->command;
  if (command.empty()) command = {env.count("SHELL") ? env["SHELL"] : "/bin/sh"};
  jobspec::JobSpec spec = parts->front().spec;
  for (std::size_t i = 1; i < parts->size(); ++i) {
    spec.het_components.push_back((*parts)[i].spec);
    spec.het_components.back().output = "/dev/null";
  }
  spec.submit_line = SubmitLine(argc, argv);
  spec.script = kHoldScript;
  spec.output = "/dev/null";
  if (p->command.empty()) {
    spec.name = "interactive";
    for (jobspec::JobSpec& c : spec.het_components) c.name = "interactive";
  }
  client::ApiClient api;
  Result<nlohmann::json> r =
      api.Post("/api/v1/jobs", nlohmann::json::parse(jobspec::JobSpecToJson(spec)));
  if (!r.ok()) return Fail("salloc", "Job submit/allocate failed: " + r.status().message());
  const unsigned long long job = (*r)["job_id"].get<unsigned long long>();
  std::fprintf(stderr, "salloc: Pending job allocation %llu\n", job);
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  ::sigaction(SIGINT, &sa, nullptr);
  Result<nlohmann::json> granted = AwaitAllocation(api, job);
  if (!granted.ok()) return Fail("salloc", granted.status());
  std::fprintf(stderr, "salloc: Granted job allocation %llu\n", job);
  // --no-shell: the allocation stays until its time limit or scancel, as Slurm's.
  if (p->srun_options.count("no-shell")) return 0;
  ::signal(SIGINT, SIG_IGN);  // the command's now
  ::signal(SIGQUIT, SIG_IGN);
  std::map<std::string, std::string> vars = AllocationEnv(*granted, spec);
  if (!spec.het_components.empty()) {
    Result<std::map<std::string, std::string>> het = HetAllocationEnv(api, job, spec);
    if (!het.ok()) return Fail("salloc", het.status());
    vars = std::move(*het);
  }
  const int code = RunCommand(command, vars);
  std::fprintf(stderr, "salloc: Relinquishing job allocation %llu\n", job);
  Result<nlohmann::json> done =
      api.Post("/api/v1/jobs/" + std::to_string(job) + "/cancel", {{"signal", SIGTERM}});
  if (!done.ok()) Fail("salloc", "releasing job " + std::to_string(job) + ": " + done.status().message());
  return code;
}

}  // namespace lockstep::cli
