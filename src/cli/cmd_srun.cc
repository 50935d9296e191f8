// srun: inside an allocation (SLURM_JOB_ID set), a job step across the job's nodes; outside,
// allocate, run the step, release. Task output goes where srun's own output goes: a batch job's
// output file when srun runs in a batch script, else srun prints it as it comes.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "spec/sbatch.h"

namespace lockstep::cli {
namespace {

// The regular file behind stdout, or "" (a terminal or a pipe).
std::string StdoutFile() {
  struct stat st {};
  if (::fstat(STDOUT_FILENO, &st) != 0 || !S_ISREG(st.st_mode)) return "";
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/fd/1", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

// Copies what `path` gained since `offset` to stdout.
void Drain(const std::string& path, std::streamoff* offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;
  in.seekg(*offset);
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    std::fwrite(buf, 1, static_cast<std::size_t>(in.gcount()), stdout);
    *offset += in.gcount();
  }
  std::fflush(stdout);
}

// Runs one step of job `job` and waits for it; the exit code srun returns.
int RunStep(client::ApiClient& api, unsigned long long job, const spec::SrunParse& p) {
  std::string out = StdoutFile();
  std::string tail;
  if (out.empty()) {
    // Nothing to share with the tasks: they write to a spool file that srun follows.
    tail = client::DefaultStateDir() + "/srun-" + std::to_string(job) + "-" +
           std::to_string(::getpid()) + ".out";
    std::ofstream(tail).close();
    ::chmod(tail.c_str(), 0666);
    out = tail;
  }
  nlohmann::json req = {{"argv", p.command},
                        {"ntasks", p.spec.ntasks},
                        {"nodes", p.spec.min_nodes},
                        {"ntasks_per_node", p.spec.ntasks_per_node},
                        {"gpus_per_task", p.spec.gpus_per_task},
                        {"env", Environment()},
                        {"cwd", CurrentDir()},
                        {"stdout", out}};
  Result<nlohmann::json> step = api.Post("/api/v1/jobs/" + std::to_string(job) + "/steps", req);
  if (!step.ok()) return Fail("srun", step.status());
  std::string where = "/api/v1/jobs/" + std::to_string(job) + "/steps/" +
                      std::to_string((*step)["step_id"].get<int>());
  std::streamoff offset = 0;
  while (true) {
    if (!tail.empty()) Drain(tail, &offset);
    Result<nlohmann::json> s = api.Get(where);
    if (!s.ok()) return Fail("srun", s.status());
    if ((*s)["state"] != "RUNNING") {
      if (!tail.empty()) {
        Drain(tail, &offset);
        ::unlink(tail.c_str());
      }
      int code = (*s)["exit_code"].get<int>(), sig = (*s)["signal"].get<int>();
      if (sig != 0) std::fprintf(stderr, "srun: error: task terminated by signal %d\n", sig);
      return sig != 0 ? 128 + sig : code;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Outside an allocation: a job that holds the nodes until the step is done, then exits with its
// code, so the job's accounting shows the step's outcome.
int AllocateAndRun(client::ApiClient& api, spec::SrunParse p) {
  std::string done = client::DefaultStateDir() + "/srun-" + std::to_string(::getpid()) + ".done";
  ::unlink(done.c_str());
  p.spec.script = "#!/bin/sh\nwhile [ ! -e '" + done + "' ]; do sleep 0.1; done\nexit \"$(cat '" +
                  done + "')\"\n";
  if (p.spec.name.empty()) p.spec.name = p.command.front();
  p.spec.output = "/dev/null";  // srun prints the step's output itself
  Result<nlohmann::json> r =
      api.Post("/api/v1/jobs", nlohmann::json::parse(spec::JobSpecToJson(p.spec)));
  if (!r.ok()) return Fail("srun", "Unable to allocate resources: " + r.status().message());
  unsigned long long job = (*r)["job_id"].get<unsigned long long>();
  bool announced = false;
  while (true) {
    Result<nlohmann::json> j = api.Get("/api/v1/jobs/" + std::to_string(job));
    if (!j.ok()) return Fail("srun", j.status());
    std::string state = (*j)["state"];
    if (state == "RUNNING") break;
    if (state != "PENDING")
      return Fail("srun", "job " + std::to_string(job) + " ended " + state + " before it ran");
    if (!announced) std::fprintf(stderr, "srun: job %llu queued and waiting for resources\n", job);
    announced = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (announced) std::fprintf(stderr, "srun: job %llu has been allocated resources\n", job);
  int code = RunStep(api, job, p);
  std::ofstream(done) << code << "\n";
  ::chmod(done.c_str(), 0666);
  return code;
}

}  // namespace

int RunSrun(int argc, char** argv) {
  std::map<std::string, std::string> env = Environment();
  std::vector<std::string> args = Args(argc, argv);
  // Inside an allocation a step has the job's tasks unless told otherwise (srun reads
  // SLURM_NTASKS, as Slurm's does).
  bool in_job = env.count("SLURM_JOB_ID") && !env["SLURM_JOB_ID"].empty();
  bool has_ntasks = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    bool short_form =
        a.rfind("-n", 0) == 0 && (a.size() == 2 || std::isdigit(static_cast<unsigned char>(a[2])));
    return short_form || a.rfind("--ntasks", 0) == 0;
  });
  if (in_job && !has_ntasks && env.count("SLURM_NTASKS"))
    args.insert(args.begin(), "--ntasks=" + env["SLURM_NTASKS"]);
  Result<spec::SrunParse> p = spec::ParseSrunArgs(args, env, CurrentDir(), std::time(nullptr));
  if (!p.ok()) return Fail("srun", p.status());
  if (p->command.empty()) return Fail("srun", "no command to run");
  client::ApiClient api;
  auto it = env.find("SLURM_JOB_ID");
  if (it != env.end() && !it->second.empty()) return RunStep(api, std::stoull(it->second), *p);
  return AllocateAndRun(api, std::move(*p));
}

}  // namespace lockstep::cli
