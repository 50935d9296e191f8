// srun: inside an allocation (SLURM_JOB_ID set), a job step across the job's nodes; outside,
// allocate, run the step, release. The tasks' output travels through lockstepd: the agents send
// what the tasks write, and srun reads it by offset (GET .../steps/{s}/output, docs/api.md) and
// writes stdout to its stdout and stderr to its stderr, so srun may run on any host, a login
// host or a batch job's first node. -l/--label puts "RANK: " before each line.
//
// Ctrl-C as in Slurm: the first prints the step's state; a second within a second aborts the
// step (SIGTERM to its tasks, SIGKILL after KillWait) and srun waits for its end; one more then
// makes srun exit at once without waiting.
#include <pwd.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "cli/bcast_client.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/what_if.h"
#include "cli/slurm/multi_prog.h"
#include "cli/srun_input.h"
#include "cli/format/field_format.h"
#include "cli/step_output_writer.h"
#include "common/base64.h"
#include "jobspec/output_pattern.h"
#include "jobspec/sbatch.h"

namespace lockstep::cli {
namespace {

// The allocation job of srun outside an allocation runs this: it waits for the job's first
// step and ends with its exit code, so the job's accounting shows the step's outcome.
constexpr const char* kAwaitStepFlag = "--lockstep-await-step";
// How long that job waits for srun to start its step before it gives up.
constexpr int kAwaitStepStartSeconds = 60;
// How long one read of the step's output may wait for new output.
constexpr int kOutputWaitMs = 500;

// Ctrl-C, counted by the handler (async-signal-safe: lock-free atomics and clock_gettime).
std::atomic<int> g_interrupts{0};
std::atomic<int> g_quick_repeats{0};  // SIGINTs within a second of the one before
std::atomic<long long> g_last_interrupt_ns{0};

void OnInterrupt(int) {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  const long long now = ts.tv_sec * 1000000000LL + ts.tv_nsec;
  const long long last = g_last_interrupt_ns.exchange(now);
  if (last != 0 && now - last < 1000000000LL) g_quick_repeats.fetch_add(1);
  g_interrupts.fetch_add(1);
}

void CatchInterrupts() {
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a long poll in progress completes; the loop looks after it
  ::sigaction(SIGINT, &sa, nullptr);
}

// Follows the step's output to its end, minding Ctrl-C; then its exit code as srun returns it.
int FollowStep(client::ApiClient& api, unsigned long long job, int step, int ntasks, bool label,
               StepOutputWriter::FileOf file_of = {}) {
  const std::string where =
      "/api/v1/jobs/" + std::to_string(job) + "/steps/" + std::to_string(step);
  const std::string name = std::to_string(job) + "." + std::to_string(step);
  StepOutputWriter writer(label, ntasks, std::move(file_of));
  unsigned long long offset = 0;
  unsigned long long notice = 0;  // scontrol notify's messages printed so far
  int interrupts_seen = 0, repeats_seen = 0;
  bool aborted = false;
  while (true) {
    const int interrupts = g_interrupts.load(), repeats = g_quick_repeats.load();
    if (interrupts > interrupts_seen) {
      if (aborted) {
        std::fprintf(stderr,
                     "srun: error: interrupted again: exiting without waiting for "
                     "StepId=%s\n",
                     name.c_str());
        return 128 + SIGINT;
      }
      if (repeats > repeats_seen) {
        std::fprintf(stderr, "srun: sending Ctrl-C to StepId=%s\nsrun: forcing job termination\n",
                     name.c_str());
        Result<nlohmann::json> r = api.Post(where + "/cancel", {{"signal", 0}});
        if (!r.ok()) std::fprintf(stderr, "srun: error: %s\n", r.status().message().c_str());
        aborted = true;
      } else {
        std::fprintf(stderr, "srun: interrupt (one more within 1 sec to abort)\n");
        std::fprintf(stderr, "srun: StepId=%s task%s %s: running\n", name.c_str(),
                     ntasks > 1 ? "s" : "",
                     ntasks > 1 ? ("0-" + std::to_string(ntasks - 1)).c_str() : "0");
      }
      interrupts_seen = interrupts;
      repeats_seen = repeats;
    }
    Result<nlohmann::json> r = api.Get(where + "/output?offset=" + std::to_string(offset) +
                                       "&notice=" + std::to_string(notice) +
                                       "&wait_ms=" + std::to_string(kOutputWaitMs));
    if (!r.ok()) return Fail("srun", r.status());
    // scontrol notify: Slurm's srun prints each message on its stderr.
    for (const auto& m : r->value("notices", nlohmann::json::array()))
      if (m.is_string())
        std::fprintf(stderr, "srun: %s\n", EscapeControl(m.get<std::string>()).c_str());
    notice = r->value("notice", notice);
    if (unsigned long long dropped = r->value("dropped", 0ULL); dropped > 0)
      std::fprintf(stderr,
                   "srun: error: %llu bytes of the step's output were lost: srun read "
                   "too slowly\n",
                   dropped);
    for (const auto& c : (*r)["chunks"]) {
      Result<std::string> data = Base64Decode(c.value("data", ""));
      if (data.ok()) writer.Write(c.value("rank", 0), c.value("stream", "") == "stderr", *data);
    }
    std::fflush(stdout);
    std::fflush(stderr);
    writer.Flush();
    offset = r->value("offset", offset);
    if (r->value("done", false)) break;
  }
  Result<nlohmann::json> s = api.Get(where);
  if (!s.ok()) return Fail("srun", s.status());
  int code = (*s)["exit_code"].get<int>(), sig = (*s)["signal"].get<int>();
  if (sig != 0) std::fprintf(stderr, "srun: error: task terminated by signal %d\n", sig);
  return sig != 0 ? 128 + sig : code;
}

// The MPI plugin types srun --mpi takes (docs/mpi.md): "pmix_v4" is pmix under its version's
// name, as Slurm 22.05 lists it.
constexpr const char* kMpiTypes[] = {"none", "pmi2", "pmix"};
constexpr const char* kPmixVersions = "pmix_v4";

// srun --mpi=list, in Slurm 22.05's words.
int PrintMpiTypes() {
  std::printf("MPI plugin types are...\n");
  for (const char* type : kMpiTypes) std::printf("\t%s\n", type);
  std::printf("specific pmix plugin versions available: %s\n", kPmixVersions);
  return 0;
}

// The step's MPI type: --mpi, else SLURM_MPI_TYPE; "" when neither names one (MpiDefault,
// none). An unknown type is refused as Slurm's srun refuses it.
Result<std::string> StepMpiType(const jobspec::SrunParse& p,
                                const std::map<std::string, std::string>& env) {
  std::string type;
  if (auto it = env.find("SLURM_MPI_TYPE"); it != env.end()) type = it->second;
  if (auto it = p.srun_options.find("mpi"); it != p.srun_options.end()) type = it->second;
  if (type.empty()) return type;
  for (const char* known : kMpiTypes)
    if (type == known) return type;
  if (type == kPmixVersions) return type;
  const std::string plugin = "mpi/" + type;
  std::fprintf(stderr,
               "srun: error: Couldn't find the specified plugin name for %s looking at all "
               "files\nsrun: error: cannot find mpi plugin for %s\nsrun: error: MPI: Cannot "
               "create context for %s\nsrun: error: MPI: Unable to load any plugin\n",
               plugin.c_str(), plugin.c_str(), plugin.c_str());
  return InvalidArgument("Invalid MPI type '" + type + "', --mpi=list for acceptable types");
}

// The program srun runs, as a path: one with a '/' as it is (relative to srun's directory),
// else the first executable of that name in srun's PATH.
Result<std::string> ProgramPath(const std::string& name, const std::string& path_list) {
  if (name.find('/') != std::string::npos)
    return name[0] == '/' ? name : CurrentDir() + "/" + name;
  std::size_t start = 0;
  while (start <= path_list.size()) {
    const std::size_t end = std::min(path_list.find(':', start), path_list.size());
    const std::string dir = path_list.substr(start, end - start);
    const std::string candidate = (dir.empty() ? CurrentDir() : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return NotFound("Unable to find executable `" + name + "` in PATH");
}

// srun --bcast[=DEST]: the program is copied to DEST on each of the job's nodes (replacing what
// is there) and the step runs that copy. Without DEST, or with a DEST ending in '/', the copy is
// slurm_bcast_<jobid>.<srun's pid>_<program> in that directory, or in the step's -D directory
// (Slurm names it by the step id and node, which lockstep does not know before the step starts).
Status BroadcastProgram(client::ApiClient& api, unsigned long long job, jobspec::SrunParse& p) {
  auto it = p.srun_options.find("bcast");
  if (it == p.srun_options.end()) return Status::Ok();
  const std::string cwd = p.spec.work_dir.empty() ? CurrentDir() : p.spec.work_dir;
  const char* path_env = std::getenv("PATH");
  Result<std::string> program = ProgramPath(p.command.front(), path_env ? path_env : "");
  if (!program.ok()) return program.status();
  std::string dest = it->second;
  if (dest.empty() || dest.back() == '/') {
    const std::string base = program->substr(program->rfind('/') + 1);
    dest += "slurm_bcast_" + std::to_string(job) + "." + std::to_string(::getpid()) + "_" + base;
  }
  if (dest[0] != '/') dest = cwd + "/" + dest;
  BroadcastFileRequest request;
  request.source = *program;
  request.dest = dest;
  request.job = job;
  request.force = true;
  if (Status s = SendFileToJob(api, request, "srun"); !s.ok()) return s;
  p.command.front() = dest;
  return Status::Ok();
}

// srun --het-group=1,3-5: the components' offsets, ascending, without repeats.
Result<std::vector<int>> HetGroups(const std::string& text) {
  const Status bad = InvalidArgument("Invalid hetjob component specification: " + text);
  std::set<int> groups;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    const std::size_t dash = item.find('-');
    int lo = 0, hi = 0;
    const char* end = item.data() + item.size();
    auto first = std::from_chars(item.data(), dash == std::string::npos ? end : item.data() + dash, lo);
    if (first.ec != std::errc() || item.empty()) return bad;
    hi = lo;
    if (dash != std::string::npos &&
        (std::from_chars(item.data() + dash + 1, end, hi).ec != std::errc() || hi < lo))
      return bad;
    if (lo < 0 || hi >= static_cast<int>(jobspec::kMaxHetComponents)) return bad;
    for (int g = lo; g <= hi; ++g) groups.insert(g);
  }
  return std::vector<int>(groups.begin(), groups.end());
}

// Starts one step of job `job`: lockstepd's answer ({"step_id", "ntasks", ...}).
Result<nlohmann::json> StartStep(client::ApiClient& api, unsigned long long job,
                                 const std::vector<jobspec::SrunParse>& parts,
                                 const std::string& mpi) {
  const jobspec::SrunParse& p = parts.front();
  // The tasks' environment is what --export made of srun's, and they start in -D's directory.
  nlohmann::json req = {{"argv", p.command},
                        {"ntasks", p.spec.ntasks},
                        {"nodes", p.spec.min_nodes},
                        {"ntasks_per_node", p.spec.ntasks_per_node},
                        {"gpus_per_task", p.spec.gpus_per_task},
                        {"env", p.spec.environment},
                        {"cwd", p.spec.work_dir},
                        {"stream", true}};
  if (!p.spec.nodelist.empty()) req["nodelist"] = p.spec.nodelist;  // -w: which of the job's nodes
  if (!mpi.empty()) req["mpi"] = mpi;
  if (parts.size() > 1) {  // srun A : B: each part on its component, with its own command
    req["het_parts"] = nlohmann::json::array();
    for (const jobspec::SrunParse& part : parts)
      req["het_parts"].push_back({{"ntasks", part.spec.ntasks}, {"argv", part.command}});
  } else if (auto it = p.srun_options.find("het-group"); it != p.srun_options.end()) {
    Result<std::vector<int>> groups = HetGroups(it->second);
    if (!groups.ok()) return groups.status();
    req["het_groups"] = *groups;
  }
  // Who started the step, for scontrol show steps' SrunHost:Pid (tools find srun by it).
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  req["srun_host"] = host;
  req["srun_pid"] = static_cast<int>(::getpid());
  if (Status s = AddStepInputFields(p.srun_options, req); !s.ok()) return s;
  return api.Post("/api/v1/jobs/" + std::to_string(job) + "/steps", req);
}

// srun -o/-e (submitit's "%j_%t_log.out"): each task's stream to the file its pattern names
// (jobspec/output_pattern.h), relative to srun's directory; none given: srun's own.
struct StepFiles {
  std::string out, err;  // patterns as given; err "" goes with out
  std::string cwd, user, job_name;
};

StepOutputWriter::FileOf FileOfTasks(const StepFiles& f, unsigned long long job,
                                     const nlohmann::json& step) {
  if (f.out.empty() && f.err.empty()) return {};
  // Ranks go to the step's nodes in order, tasks_per_node of them each.
  std::vector<std::pair<std::string, int>> node_of_rank;
  const nlohmann::json nodes = step.value("nodes", nlohmann::json::array());
  const nlohmann::json per = step.value("tasks_per_node", nlohmann::json::array());
  for (std::size_t i = 0; i < nodes.size() && i < per.size(); ++i)
    for (int k = 0; k < per[i].get<int>(); ++k)
      node_of_rank.emplace_back(nodes[i].get<std::string>(), static_cast<int>(i));
  jobspec::OutputPatternVars vars;
  vars.job_id = job;
  vars.array_job_id = job;
  vars.job_name = f.job_name;
  vars.user = f.user;
  vars.step_id = step["step_id"].get<std::uint32_t>();
  return [f, vars, node_of_rank](int rank, bool is_stderr) {
    const std::string& pattern = is_stderr && !f.err.empty() ? f.err : f.out;
    if (pattern.empty()) return std::string();
    jobspec::OutputPatternVars v = vars;
    v.task_id = static_cast<std::uint32_t>(rank);
    if (rank >= 0 && static_cast<std::size_t>(rank) < node_of_rank.size()) {
      v.node = node_of_rank[rank].first;
      v.node_id = static_cast<std::uint32_t>(node_of_rank[rank].second);
    }
    std::string name = jobspec::ExpandOutputPattern(pattern, v);
    return name.empty() || name[0] == '/' ? name : f.cwd + "/" + name;
  };
}

// Follows the step's output while srun's stdin goes to it (when it reads it), with srun's
// terminal raw for --pty.
int FollowStarted(client::ApiClient& api, unsigned long long job, const nlohmann::json& step,
                  bool label, bool pty, const StepFiles& files = {}) {
  const int id = step["step_id"].get<int>();
  std::optional<RawTerminal> raw;
  std::optional<StdinForwarder> input;
  if (pty) raw.emplace();
  if (step.value("input", false)) input.emplace(job, id, pty);
  int code = FollowStep(api, job, id, step.value("ntasks", 1), label, FileOfTasks(files, job, step));
  input.reset();
  raw.reset();
  return code;
}

// Outside an allocation: a job that holds the nodes until the step is done, then exits with its
// code (kAwaitStepFlag), so the job's accounting shows the step's outcome.
int AllocateAndRun(client::ApiClient& api, std::vector<jobspec::SrunParse> parts, bool label,
                   const StepFiles& files, const std::string& mpi) {
  jobspec::SrunParse& p = parts.front();
  const bool pty = p.srun_options.count("pty") > 0;
  p.spec.script = std::string("#!/bin/sh\nexec srun ") + kAwaitStepFlag + "\n";
  if (p.spec.name.empty()) p.spec.name = p.command.front();
  p.spec.output = "/dev/null";  // srun prints the step's output itself
  for (std::size_t i = 1; i < parts.size(); ++i) {  // srun A : B: a heterogeneous job
    p.spec.het_components.push_back(parts[i].spec);
    p.spec.het_components.back().output = "/dev/null";
  }
  Result<nlohmann::json> r =
      api.Post("/api/v1/jobs", nlohmann::json::parse(jobspec::JobSpecToJson(p.spec)));
  if (!r.ok()) return Fail("srun", "Unable to allocate resources: " + r.status().message());
  unsigned long long job = (*r)["job_id"].get<unsigned long long>();
  const std::string where = "/api/v1/jobs/" + std::to_string(job);
  bool announced = false;
  // As salloc (cmd_salloc.cc): "queued" only for a job still pending after a second.
  const auto quiet_until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (true) {
    if (g_interrupts.load() > 0) {
      std::fprintf(stderr, "srun: interrupted: cancelling job %llu\n", job);
      (void)api.Post(where + "/cancel", {{"signal", 0}});
      return 1;
    }
    Result<nlohmann::json> j = api.Get(where);
    if (!j.ok()) return Fail("srun", j.status());
    std::string state = (*j)["state"];
    if (state == "RUNNING") break;
    if (state != "PENDING")
      return Fail("srun", "job " + std::to_string(job) + " ended " + state + " before it ran");
    if (!announced && std::chrono::steady_clock::now() > quiet_until) {
      std::fprintf(stderr, "srun: job %llu queued and waiting for resources\n", job);
      announced = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (announced) std::fprintf(stderr, "srun: job %llu has been allocated resources\n", job);
  if (Status s = BroadcastProgram(api, job, p); !s.ok()) {
    (void)api.Post(where + "/cancel", {{"signal", 0}});  // nothing will run in it
    return NodesFailed(s) ? 1 : Fail("srun", s);
  }
  Result<nlohmann::json> step = StartStep(api, job, parts, mpi);
  if (!step.ok()) {
    (void)api.Post(where + "/cancel", {{"signal", 0}});  // nothing will run in it
    return Fail("srun", step.status());
  }
  return FollowStarted(api, job, *step, label, pty, files);  // the job ends with the step
}

// The allocation job's side of AllocateAndRun: waits for the job's first step to start and
// end; exits with the step's code.
int AwaitFirstStep(client::ApiClient& api, const std::string& job_id) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(kAwaitStepStartSeconds);
  bool started = false;
  while (true) {
    Result<nlohmann::json> j = api.Get("/api/v1/jobs/" + job_id);
    if (j.ok()) {
      for (const auto& s : j->value("steps", nlohmann::json::array())) {
        if (!s["step_id"].is_number_integer()) continue;  // the batch step
        started = true;
        if (s.value("state", "") == "RUNNING") break;
        int code = s.value("exit_code", 0), sig = s.value("signal", 0);
        return sig != 0 ? 128 + sig : code;
      }
    }
    if (!started && std::chrono::steady_clock::now() > give_up)
      return Fail("srun", "no step started in job " + job_id + " within " +
                              std::to_string(kAwaitStepStartSeconds) + " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace

int RunSrun(int argc, char** argv) {
  std::map<std::string, std::string> env = Environment();
  std::vector<std::string> args = Args(argc, argv);
  if (std::optional<int> rc = SbatchHelpRequested(args, "srun")) return *rc;
  client::ApiClient api;
  std::map<std::string, std::string>::iterator job_id = env.find("SLURM_JOB_ID");
  bool in_job = job_id != env.end() && !job_id->second.empty();
  if (in_job && args.size() == 1 && args[0] == kAwaitStepFlag)
    return AwaitFirstStep(api, job_id->second);
  // Inside an allocation a step has the job's tasks unless told otherwise (srun reads
  // SLURM_NTASKS, as Slurm's does).
  bool has_ntasks = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    bool short_form =
        a.rfind("-n", 0) == 0 && (a.size() == 2 || std::isdigit(static_cast<unsigned char>(a[2])));
    return short_form || a.rfind("--ntasks", 0) == 0;
  });
  // In a heterogeneous job: the first component's (SLURM_NTASKS counts them all in salloc);
  // with --het-group, the chosen components' own, which lockstepd knows.
  const bool het_group = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a.rfind("--het-group", 0) == 0;
  });
  const char* ntasks_var =
      env.count("SLURM_HET_SIZE") ? "SLURM_NTASKS_HET_GROUP_0" : "SLURM_NTASKS";
  if (in_job && !has_ntasks && !het_group && env.count(ntasks_var))
    args.insert(args.begin(), "--ntasks=" + env[ntasks_var]);
  const Time now = std::time(nullptr);
  Result<std::vector<jobspec::SrunParse>> parts =
      jobspec::ParseSrunComponents(args, env, CurrentDir(), now, ReadTextFile);
  if (!parts.ok()) return FailOptions("srun", parts.status());
  // srun's own options (--label, --pty, ...) are the command line's, whichever part has them.
  jobspec::SrunParse* p = &parts->front();
  for (std::size_t i = 1; i < parts->size(); ++i)
    p->srun_options.insert((*parts)[i].srun_options.begin(), (*parts)[i].srun_options.end());
  if (auto mpi = p->srun_options.find("mpi"); mpi != p->srun_options.end() && mpi->second == "list")
    return PrintMpiTypes();
  Result<std::string> mpi = StepMpiType(*p, env);
  if (!mpi.ok()) return Fail("srun", mpi.status());
  // Inside a job, the job's own SLURM_* variables would warn again at every step.
  if (!in_job)
    for (const jobspec::SrunParse& part : *parts) PrintOptionWarnings(part.spec.warnings);
  for (const char* salloc_only : {"no-shell", "bell", "no-bell", "kill-command"}) {
    if (p->srun_options.count(salloc_only))
      return FailOptions("srun", InvalidArgument(std::string("unrecognized option '--") +
                                                 salloc_only + "'"));
  }
  if (p->command.empty()) return Fail("srun", "no command to run");
  if (p->spec.test_only) {  // when it would start; the command is not run
    client::ApiClient api;
    p->spec.script = "#!/bin/sh\n";
    return ReportTestOnly("srun", api, p->spec);
  }
  const bool label = p->srun_options.count("label") > 0;
  const bool pty = p->srun_options.count("pty") > 0;
  // --input and --pty checked before anything is submitted.
  nlohmann::json input_fields;
  if (Status s = AddStepInputFields(p->srun_options, input_fields); !s.ok()) return Fail("srun", s);
  if (p->srun_options.count("multi-prog")) {
    Result<std::string> conf = ReadTextFile(p->command.front());
    if (!conf.ok()) return Fail("srun", conf.status());
    Result<std::vector<std::string>> argv = MultiProgCommand(*conf, p->command.front());
    if (!argv.ok()) return Fail("srun", argv.status());
    p->command = std::move(*argv);
  }
  // --jobid: a step in that job (with --overlap, beside its running steps), as from inside it.
  if (auto it = p->srun_options.find("jobid"); it != p->srun_options.end()) {
    in_job = true;
    job_id = env.insert_or_assign("SLURM_JOB_ID", it->second).first;
    if (it->second.empty() || it->second.size() > 18 ||
        it->second.find_first_not_of("0123456789") != std::string::npos)
      return Fail("srun", "Invalid job id specified: " + it->second);
  }
  CatchInterrupts();
  StepFiles files;
  files.out = p->spec.output;
  files.err = p->spec.error;
  files.cwd = p->spec.work_dir.empty() ? CurrentDir() : p->spec.work_dir;
  files.job_name = p->spec.name.empty() ? p->command.front() : p->spec.name;
  if (const passwd* pw = ::getpwuid(::getuid())) files.user = pw->pw_name;
  if (in_job) {
    unsigned long long job = std::stoull(job_id->second);
    if (auto it = env.find("SLURM_JOB_NAME"); it != env.end()) files.job_name = it->second;
    if (Status s = BroadcastProgram(api, job, *p); !s.ok())
      return NodesFailed(s) ? 1 : Fail("srun", s);
    Result<nlohmann::json> step = StartStep(api, job, *parts, *mpi);
    if (!step.ok()) return Fail("srun", step.status());
    return FollowStarted(api, job, *step, label, pty, files);
  }
  p->spec.submit_line = SubmitLine(argc, argv);
  return AllocateAndRun(api, std::move(*parts), label, files, *mpi);
}

}  // namespace lockstep::cli
