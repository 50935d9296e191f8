#include "backend/agent/agent.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "backend/agent/agent_unit.h"
#include "common/base64.h"
#include "common/log.h"

namespace lockstep::agent {
namespace {

// Output sent to lockstepd per request, before base64: well under the 1 MiB request body
// lockstepd reads.
constexpr std::size_t kOutputPerRequest = 512 * 1024;
// How long output pipes may stay open after a unit's processes are gone (something it started
// outside its process group holds them) before the agent stops reading them.
constexpr auto kOutputLinger = std::chrono::seconds(2);
// How long a launch waits for the first check of the node's shared file systems.
constexpr auto kStorageCheckWait = std::chrono::seconds(60);
// How long keeping a core (as the job's user, in its working directory) may take.
constexpr auto kCoreKeeperTimeout = std::chrono::seconds(20);

}  // namespace


Agent::Agent(const AgentOptions& options)
    : options_(options), poll_client_(options.socket_path), event_client_(options.socket_path) {}

Result<std::unique_ptr<Agent>> Agent::Create(const AgentOptions& options) {
  if (options.nodes.empty()) return InvalidArgument("the agent serves no node");
  std::unique_ptr<Agent> a(new Agent(options));
  if (a->options_.name.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    a->options_.name = std::string(host) + ":" + options.nodes.front().name;
  }
  Result<Spool> spool = Spool::Open(options.spool_dir);
  if (!spool.ok()) return spool.status();
  a->spool_ = std::make_unique<Spool>(std::move(*spool));
  Result<TaskRecords> records = TaskRecords::Open(options.spool_dir);
  if (!records.ok()) return records.status();
  a->task_records_ = std::make_unique<TaskRecords>(std::move(*records));
  // Before anything of ours runs: what an agent killed on this spool left running.
  for (const std::string& line : a->task_records_->EndLeftovers()) log::Warning("{}", line);
  Launcher::Options lo;
  lo.cgroup_root = options.cgroup_root;
  lo.log = [](const std::string& line) { log::Warning("{}", line); };
  Result<std::unique_ptr<Launcher>> l = Launcher::Create(lo);
  if (!l.ok()) return l.status();
  a->launcher_ = std::move(*l);
  if (a->options_.core_keeper.empty()) {
    char self[4096] = {};
    const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0) a->options_.core_keeper.assign(self, static_cast<std::size_t>(len));
  }
  Agent* raw = a.get();
  OutputPump::Options po;
  po.sink = [raw](std::vector<OutputChunk> chunks) { raw->TakeOutput(std::move(chunks)); };
  po.closed = [raw](std::uint64_t task) { raw->OutputClosed(task); };
  a->pump_ = std::make_unique<OutputPump>(std::move(po));
  return a;
}

Agent::~Agent() {
  Stop();
  if (reaper_.joinable()) reaper_.join();
  JoinHookThreads(/*only_finished=*/false);
  std::lock_guard<std::mutex> lock(mu_);
  for (std::thread& t : terminators_)
    if (t.joinable()) t.join();
}

void Agent::Stop() {
  stopping_ = true;
}

void Agent::Shutdown(std::chrono::seconds grace) {
  if (reaper_.joinable()) reaper_.join();
  std::vector<pid_t> pids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::thread& t : terminators_)
      if (t.joinable()) t.join();
    terminators_.clear();
    for (const auto& u : units_) pids.insert(pids.end(), u->alive.begin(), u->alive.end());
  }
  std::vector<std::thread> enders;
  for (pid_t p : pids)
    enders.emplace_back([this, p, grace] { (void)launcher_->Terminate(p, grace); });
  for (std::thread& t : enders) t.join();
  // Reap them (their cgroups go with them) and tell lockstepd, if it listens.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  std::lock_guard<std::mutex> lock(mu_);
  while (!by_pid_.empty() && std::chrono::steady_clock::now() < deadline) {
    for (auto& [pid, exit] : launcher_->Reap()) {
      by_pid_.erase(pid);
      task_records_->Remove(pid);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status Agent::Register() {
  nlohmann::json nodes = nlohmann::json::array();
  for (const AgentNode& n : options_.nodes) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const AgentNode::Gpu& g : n.gpus) {
      nlohmann::json mig = nlohmann::json::array();
      for (const AgentNode::Gpu::Mig& m : g.mig)
        mig.push_back({{"uuid", m.uuid}, {"profile", m.profile}});
      gpus.push_back({{"index", g.index}, {"uuid", g.uuid}, {"type", g.type}, {"mig", mig}});
    }
    nodes.push_back({{"name", n.name},
                     {"cpus", n.cpus},
                     {"mem_mb", n.mem_mb},
                     {"gpus", gpus},
                     {"enforces",
                      {{"memory", launcher_->memory_limits_enabled()},
                       {"cpus", launcher_->cpu_limits_enabled()}}}});
  }
  nlohmann::json running = nlohmann::json::array();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& u : units_)
      if (!u->alive.empty() || u->launching)  // a unit in its prolog runs too
        running.push_back(
            {{"job_id", u->job}, {"run", u->run}, {"step", u->step}, {"node", u->node}});
  }
  Result<nlohmann::json> r =
      poll_client_.Post("/api/v1/agent/register", {{"agent", options_.name},
                                                   {"address", options_.address},
                                                   {"nodes", nodes},
                                                   {"running", running},
                                                   {"launches", options_.launches()}});
  return r.ok() ? Status::Ok() : r.status();
}

bool Agent::NodeBusy(const std::string& node) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::any_of(units_.begin(), units_.end(), [&](const std::shared_ptr<Unit>& u) {
    return u->node == node && !u->alive.empty();
  });
}

void Agent::Run() {
  reaper_ = std::thread([this] { ReapLoop(); });
  std::vector<HealthNode> health_nodes;
  for (const AgentNode& n : options_.nodes)
    health_nodes.push_back({n.name, static_cast<int>(n.gpus.size()), n.nvml});
  const HealthScope scope = options_.mounts_only   ? HealthScope::kStorage
                           : options_.health_only ? HealthScope::kNodeChecks
                                                  : HealthScope::kAll;
  health_ = std::make_unique<HealthMonitor>(
      options_.name, options_.socket_path, health_nodes,
      [this](const std::string& n) { return NodeBusy(n); }, scope, options_.host_root);
  bool registered = false;
  auto last_answer = std::chrono::steady_clock::now();
  while (!stopping_) {
    if (!registered) {
      Status s = Register();
      if (!s.ok()) {
        const auto silent = std::chrono::steady_clock::now() - last_answer;
        if (options_.give_up_after.count() > 0 && silent >= options_.give_up_after) {
          log::Error(
              "lockstepd at {} has not answered for {} s and refuses registration ({}); giving "
              "up (--give-up-after {})",
              options_.socket_path,
              std::chrono::duration_cast<std::chrono::seconds>(silent).count(), s.message(),
              options_.give_up_after.count());
          gave_up_ = true;
          stopping_ = true;
          break;
        }
        log::Warning("{}; retrying", s.message());
        std::this_thread::sleep_for(std::chrono::seconds(1));
        continue;
      }
      registered = true;
      last_answer = std::chrono::steady_clock::now();
    }
    Result<nlohmann::json> r = poll_client_.Get(
        "/api/v1/agent/commands?agent=" + client::UrlEncode(options_.name) + "&wait_ms=2000");
    if (!r.ok()) {
      registered = false;  // lockstepd went away: register again when it is back
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    last_answer = std::chrono::steady_clock::now();
    if (r->value("register", false)) registered = false;
    for (const auto& c : (*r)["commands"]) HandleCommand(c);
  }
  health_->Stop();
}

void Agent::HandleCommand(const nlohmann::json& c) {
  std::string type = c.value("type", "");
  std::uint64_t job = c.value("job_id", std::uint64_t{0});
  if (type == "launch" && !options_.launches())
    log::Error("job {}: this agent only checks ({}): not launched", job,
               options_.health_only ? "--health-only" : "--mounts-only");
  else if (type == "launch")
    Launch(c);
  else if (type == "bcast") {
    std::lock_guard<std::mutex> lock(mu_);
    StartHookThreadLocked([this, c] { Broadcast(c); });
  }
  else if (type == "signal")
    SignalJob(job, c.value("signal", 15), c.value("step_id", -1), c.value("batch", false));
  else if (type == "suspend" || type == "resume")
    SuspendRun(job, c.value("run", 0), type == "suspend");
  else if (type == "terminate")
    TerminateJob(job, c.value("grace_s", 30), c.value("run", -1), c.value("step_id", -1));
  else if (type == "job_end")
    JobEnd(c);
  else if (type == "gather_done")
    MpiGatherDone(c);
  else if (type == "health" && health_) {
    Result<HealthSettings> settings = DecodeHealthSettings(c);
    if (settings.ok())
      health_->Configure(*settings);
    else
      log::Warning("{}", settings.status().message());
  }
}

void Agent::Launch(const nlohmann::json& c) {
  auto unit = std::make_shared<Unit>();
  unit->job = c.value("job_id", std::uint64_t{0});
  unit->run = c.value("run", 0);
  unit->step = c.value("step", "batch");
  unit->step_id = c.value("step_id", -1);
  unit->node = c.value("node", "");
  unit->uid = c.value("uid", 0u);
  unit->gid = c.value("gid", 0u);
  unit->cwd = c.value("cwd", "/");
  // The launch goes on in a thread of its own: until its tasks have executed they act on the
  // user's files (working directory, output files), where a FIFO or a hung file system may hold
  // them; the command loop (the agent's heartbeat) and other jobs' launches never wait on that.
  std::lock_guard<std::mutex> lock(mu_);
  units_.push_back(unit);
  if (c.contains("prolog"))
    StartHookThreadLocked([this, unit, c] { LaunchAfterProlog(unit, c); });
  else
    StartHookThreadLocked([this, unit, c] { SpawnTasks(unit, c); });
}

bool Agent::LaunchGivenUp(const Unit& unit) {
  std::lock_guard<std::mutex> lock(mu_);
  return unit.terminated || stopping_;
}

bool Agent::StorageMissing(const std::shared_ptr<Unit>& unit) {
  if (unit->step != "batch" || !health_) return false;
  const std::string problem = health_->StorageProblem(unit->node, kStorageCheckWait);
  if (problem.empty()) return false;
  log::Warning("job {}: not started on {}: {}", unit->job, unit->node, problem);
  std::lock_guard<std::mutex> lock(mu_);
  unit->launching = false;
  unit->launch_failed = true;
  unit->exit_code = 1;
  unit->error = problem + " on " + unit->node;
  MaybeReportLocked(unit);
  return true;
}

void Agent::SpawnTasks(const std::shared_ptr<Unit>& unit, const nlohmann::json& c) {
  // A batch step never starts on a node that lacks a shared file system it gets: lockstepd
  // queues the job again (the node drains from the same finding).
  if (StorageMissing(unit)) return;
  const uid_t uid = unit->uid;
  const gid_t gid = unit->gid;
  std::string script_path;
  int failures = 0;
  if (c.contains("script")) {
    // The script goes to the run's own spool directory, readable only by the job's user.
    Result<std::string> path = spool_->WriteScript(SpoolRun{unit->job, unit->run, unit->node},
                                                   c["script"].get<std::string>(), uid, gid);
    if (path.ok()) {
      script_path = *path;
      unit->spooled = true;
    } else {
      log::Error("job {}: {}", unit->job, path.status().message());
      ++failures;
    }
  }
  const std::uint64_t launch_seq = ++launches_;
  // An MPI step: its tasks get their server's variables (PMIx or PMI-2), or none starts here.
  std::map<int, MpiTask> mpi_tasks;
  if (!c.value("mpi", std::string()).empty()) {
    Result<std::map<int, MpiTask>> env = PrepareMpi(*unit, c);
    if (env.ok()) {
      mpi_tasks = std::move(*env);
      std::lock_guard<std::mutex> lock(mu_);
      unit->mpi = true;
    } else {
      log::Error("job {}: {}", unit->job, env.status().message());
      std::lock_guard<std::mutex> lock(mu_);
      unit->error = env.status().message();
      unit->launching = false;
      unit->exit_code = 1;
      MaybeReportLocked(unit);
      return;
    }
  }
  // srun follows the step's output through lockstepd: each task writes into two pipes.
  const bool stream = c.value("stream_output", false);
  std::vector<UniqueFd> feed_pipes, feed_pty;  // srun's input goes into these (InputFeeder)
  for (const auto& t : c["tasks"]) {
    if (c.contains("script") && !unit->spooled) break;  // no script to run: the launch failed
    if (LaunchGivenUp(*unit)) break;  // ended (scancel, time limit) before it started: run nothing
    TaskSpec spec;
    for (const auto& a : t["argv"]) {
      std::string arg = a.get<std::string>();
      spec.argv.push_back(arg == "@SCRIPT@" ? script_path : arg);
    }
    spec.env = t["env"].get<std::map<std::string, std::string>>();
    MpiTask* mpi = nullptr;
    if (auto it = mpi_tasks.find(t.value("rank", 0)); it != mpi_tasks.end()) mpi = &it->second;
    if (mpi) {
      for (const auto& [key, value] : mpi->env) spec.env[key] = value;
      spec.inherit_fd = mpi->inherit.get();
    }
    if (!options_.tool_dir.empty()) {
      std::string& path = spec.env["PATH"];
      path = options_.tool_dir + (path.empty() ? ":/usr/local/bin:/usr/bin:/bin" : ":" + path);
    }
    spec.cwd = c.value("cwd", "/");
    spec.uid = uid;
    spec.gid = gid;
    spec.stdout_path = t.value("stdout", "/dev/null");
    spec.stderr_path = t.value("stderr", "");
    spec.append = t.value("append", false);
    spec.stdin_path = t.value("stdin_path", "/dev/null");
    Result<TaskInput> input = MakeTaskInput(c, t, stream);
    if (!input.ok()) {
      log::Error("job {}: {}", unit->job, input.status().message());
      ++failures;
      continue;
    }
    const bool pty = input->pty_output.get() >= 0;
    if (pty) {  // the terminal is the task's stdin, stdout and stderr
      spec.stdin_fd = spec.stdout_fd = spec.stderr_fd = input->task_end.get();
      spec.controlling_tty = true;
    } else if (input->task_end.get() >= 0) {
      spec.stdin_fd = input->task_end.get();
    }
    UniqueFd pipes[2][2];  // [stdout, stderr][read, write]
    if (stream && !pty) {
      for (auto& p : pipes) {
        int fds[2] = {-1, -1};
        if (::pipe2(fds, O_CLOEXEC) != 0)
          log::Error("job {}: cannot create a pipe: {}", unit->job, std::strerror(errno));
        p[0] = UniqueFd(fds[0]);
        p[1] = UniqueFd(fds[1]);
      }
      spec.stdout_fd = pipes[0][1].get();
      spec.stderr_fd = pipes[1][1].get();
    }
    spec.memory_limit_mb = c.value("memory_limit_mb", std::int64_t{0});
    spec.cpu_limit = std::max(0, c.value("cpus", 0));
    if (const std::int64_t core_mb = c.value("core_max_mb", std::int64_t{-1}); core_mb >= 0)
      spec.core_limit_bytes = core_mb * 1024 * 1024;
    // Unique on this host: agents share the cgroup root, a requeued job may come back before
    // its old cgroup is gone, and an agent's pid may be reused by a later agent while tasks
    // that outlived the first still sit in its cgroups (hence the start time).
    static const std::string instance =
        std::to_string(::getpid()) + "t" + std::to_string(static_cast<long long>(::time(nullptr)));
    spec.cgroup_name = "a" + instance + "_job" + std::to_string(unit->job) + "_" +
                       std::to_string(launch_seq) + "/" + unit->node + "_" + unit->step +
                       (unit->step_id >= 0 ? "_" + std::to_string(unit->step_id) : "") + "_" +
                       std::to_string(unit->pids.size());
    Result<pid_t> pid = launcher_->Spawn(spec, [this, &unit] { return LaunchGivenUp(*unit); });
    pipes[0][1].Reset();  // the task holds the write ends now
    pipes[1][1].Reset();
    if (mpi) mpi->inherit.Reset();  // and its end of the PMI-2 server's socket
    input->task_end.Reset();
    if (!pid.ok()) {
      log::Error("job {}: {}", unit->job, pid.status().message());
      if (unit->error.empty()) unit->error = pid.status().message();
      ++failures;
      continue;
    }
    const std::string cgroup = launcher_->cgroups_enabled()
                                   ? launcher_->cgroup_root() + "/" + spec.cgroup_name
                                   : std::string();
    if (Status st = task_records_->Add(*pid, cgroup); !st.ok()) log::Warning("{}", st.message());
    std::uint64_t output_task = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      unit->pids.push_back(*pid);
      unit->ranks.push_back(t.value("rank", 0));
      unit->alive.insert(*pid);
      by_pid_[*pid] = unit;
      // Terminated while it was starting, after the last look: it ends at once.
      if (unit->terminated) (void)launcher_->Signal(*pid, SIGKILL);
      for (int signo : unit->pending_signals) (void)launcher_->Signal(*pid, signo);
      if (suspended_runs_.count({unit->job, unit->run})) (void)launcher_->Suspend(*pid, true);
      if (stream) {
        output_task = ++next_output_task_;
        output_tasks_[output_task] = {unit, t.value("rank", 0)};
        unit->output_tasks.push_back(output_task);
        ++unit->open_outputs;
      }
      // Reaped before it was registered here (a task that ends at once).
      if (auto early = early_exits_.find(*pid); early != early_exits_.end()) {
        const TaskExit exit = early->second;
        early_exits_.erase(early);
        task_records_->Remove(*pid);
        TaskEndedLocked(*pid, exit);
      }
    }
    if (input->feed_end.get() >= 0)
      (pty ? feed_pty : feed_pipes).push_back(std::move(input->feed_end));
    if (stream && pty)
      pump_->Add(output_task, std::move(input->pty_output), UniqueFd());
    else if (stream)
      pump_->Add(output_task, std::move(pipes[0][0]), std::move(pipes[1][0]));
  }
  std::unique_ptr<InputFeeder> feeder;
  if (!feed_pipes.empty() || !feed_pty.empty())
    feeder = std::make_unique<InputFeeder>(
        InputFeeder::Options{options_.socket_path, unit->job, unit->step_id, unit->node},
        std::move(feed_pipes), feed_pty.empty() ? UniqueFd() : std::move(feed_pty.front()));
  std::lock_guard<std::mutex> lock(mu_);
  unit->feeder = std::move(feeder);
  unit->launching = false;
  // Nothing could start (no such program, a cwd that does not exist): the step failed; or it
  // was ended before it started.
  if (unit->pids.empty() && unit->terminated)
    unit->signal = SIGKILL;
  else if (unit->pids.empty())
    unit->exit_code = failures > 0 ? 1 : 0;
  MaybeReportLocked(unit);
}

void Agent::MaybeReportLocked(const std::shared_ptr<Unit>& u) {
  if (u->reported || u->launching || u->keeping_core || !u->alive.empty() || u->open_outputs > 0)
    return;
  u->reported = true;
  Report({{"type", "exited"},
          {"job_id", u->job},
          {"run", u->run},
          {"step", u->step},
          {"step_id", u->step_id},
          {"node", u->node},
          {"exit_code", u->exit_code},
          {"signal", u->signal},
          {"oom", u->oom},
          {"core_dump", u->core_dump},
          {"error", u->error},
          {"launch_failed", u->launch_failed}});
  if (u->spooled) spool_->RemoveRun(SpoolRun{u->job, u->run, u->node});
  if (u->feeder) {  // its thread ends within a poll; ReapLoop destroys it once it has
    u->feeder->Stop();
    retired_feeders_.push_back(std::move(u->feeder));
  }
  for (std::uint64_t t : u->output_tasks) output_tasks_.erase(t);
  if (u->mpi) mpi_ended_.emplace_back(u->job, u->step_id, u->node);
  std::erase(units_, u);
  MaybeRunEpilogLocked({u->job, u->run, u->node});
}

void Agent::TakeOutput(std::vector<OutputChunk> chunks) {
  std::lock_guard<std::mutex> lock(mu_);
  for (OutputChunk& c : chunks) {
    auto it = output_tasks_.find(c.task);
    if (it == output_tasks_.end()) continue;
    const Unit& u = *it->second.unit;
    const std::size_t size = c.data.size();
    output_outbox_.emplace_back(nlohmann::json{{"job_id", u.job},
                                               {"step_id", u.step_id},
                                               {"node", u.node},
                                               {"rank", it->second.rank},
                                               {"stream", c.stream == 2 ? "stderr" : "stdout"},
                                               {"data", Base64Encode(c.data)}},
                                size);
  }
}

void Agent::OutputClosed(std::uint64_t task) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = output_tasks_.find(task);
  if (it == output_tasks_.end()) return;
  std::shared_ptr<Unit> u = it->second.unit;
  --u->open_outputs;
  MaybeReportLocked(u);
}

void Agent::TaskEndedLocked(pid_t pid, const TaskExit& exit) {
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end()) {  // its launch thread has not registered it yet: it will look here
    early_exits_[pid] = exit;
    return;
  }
  std::shared_ptr<Unit> u = it->second;
  by_pid_.erase(it);
  u->alive.erase(pid);
  u->exit_code = std::max(u->exit_code, exit.exit_code);
  if (exit.signal != 0 && u->signal == 0) u->signal = exit.signal;
  u->oom |= exit.oom_killed;
  if (exit.core_dumped && u->core_dump.empty() && !u->keeping_core)
    KeepCoreLocked(u, pid, exit.signal);
  if (!u->alive.empty()) return;
  u->gone_at = std::chrono::steady_clock::now();
  MaybeReportLocked(u);
}

void Agent::KeepCoreLocked(const std::shared_ptr<Unit>& u, pid_t pid, int signal) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const CoreDumpContext context{u->job, u->node, pid, signal, u->cwd, u->uid, u->gid, host};
  u->keeping_core = true;  // the unit's end waits for the evidence
  // In a thread of its own, as the job's user: the working directory may be slow or hung.
  StartHookThreadLocked([this, u, context] {
    std::string evidence =
        KeepCoreDump(core_pattern_, context, options_.core_keeper, kCoreKeeperTimeout);
    std::lock_guard<std::mutex> lock(mu_);
    u->core_dump = std::move(evidence);
    u->keeping_core = false;
    MaybeReportLocked(u);
  });
}

void Agent::SignalJob(std::uint64_t job, int signo, int step_id, bool batch_only) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& u : units_) {
    if (batch_only) {  // the shell only: not its process group, nor the steps
      if (u->job == job && u->step == "batch")
        for (pid_t p : u->alive) (void)launcher_->SignalLeader(p, signo);
      continue;
    }
    if (u->job == job && (step_id < 0 || (u->step == "step" && u->step_id == step_id))) {
      for (pid_t p : u->alive) (void)launcher_->Signal(p, signo);
      if (u->launching) u->pending_signals.push_back(signo);  // for tasks not started yet
    }
  }
}

void Agent::TerminateJob(std::uint64_t job, int grace_s, int run, int step_id) {
  std::vector<pid_t> pids;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& u : units_)
    if (u->job == job && (run < 0 || u->run == run) &&
        (step_id < 0 || (u->step == "step" && u->step_id == step_id))) {
      pids.insert(pids.end(), u->alive.begin(), u->alive.end());
      if (u->launching) u->terminated = true;  // starting (prolog, files): it starts nothing more
    }
  if (step_id < 0)  // Terminate thaws what it ends: the run is no longer suspended here
    std::erase_if(suspended_runs_, [&](const auto& r) {
      return r.first == job && (run < 0 || r.second == run);
    });
  if (pids.empty()) return;
  // SIGTERM now, SIGKILL after the grace, every task at once, without holding up the command loop.
  for (pid_t p : pids)
    terminators_.emplace_back(
        [this, p, grace_s] { (void)launcher_->Terminate(p, std::chrono::seconds(grace_s)); });
}

void Agent::Report(nlohmann::json event) {
  outbox_.push_back(std::move(event));
}

void Agent::ReapLoop() {
  while (!stopping_) {
    for (auto& [pid, exit] : launcher_->Reap()) {
      task_records_->Remove(pid);
      std::lock_guard<std::mutex> lock(mu_);
      TaskEndedLocked(pid, exit);
    }
    // Pipes that something of a finished unit still holds open: read what is there and stop.
    std::vector<std::uint64_t> abandon;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto now = std::chrono::steady_clock::now();
      for (const auto& u : units_)
        if (u->alive.empty() && !u->launching && u->open_outputs > 0 && !u->abandoned &&
            now - u->gone_at > kOutputLinger) {
          u->abandoned = true;
          abandon.insert(abandon.end(), u->output_tasks.begin(), u->output_tasks.end());
        }
    }
    for (std::uint64_t t : abandon) pump_->Abandon(t);
    JoinHookThreads(/*only_finished=*/true);
    std::vector<std::unique_ptr<InputFeeder>> finished;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& f : retired_feeders_)
        if (f->done()) finished.push_back(std::move(f));
      std::erase(retired_feeders_, nullptr);
    }
    finished.clear();  // joins threads that have already ended
    EndMpiUnits();
    SampleUsageIfDue();
    SendEvents();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void Agent::SendEvents() {
  std::vector<nlohmann::json> batch;
  std::size_t output_count = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch.swap(outbox_);
    output_count = output_outbox_.size();
  }
  {
    std::lock_guard<std::mutex> lock(mpi_mu_);
    batch.insert(batch.end(), gather_outbox_.begin(), gather_outbox_.end());
    gather_outbox_.clear();
  }
  // Output first: every chunk of a unit was queued before its end (MaybeReportLocked waits for
  // its pipes), so lockstepd sees a step's output before it sees the step end.
  if (!SendOutput(output_count) || batch.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    outbox_.insert(outbox_.begin(), batch.begin(), batch.end());
    return;
  }
  Result<nlohmann::json> r =
      event_client_.Post("/api/v1/agent/events", {{"agent", options_.name}, {"events", batch}});
  if (r.ok()) return;
  // Keep them for the next try, in order.
  std::lock_guard<std::mutex> lock(mu_);
  outbox_.insert(outbox_.begin(), batch.begin(), batch.end());
}

bool Agent::SendOutput(std::size_t count) {
  while (count > 0) {
    nlohmann::json chunks = nlohmann::json::array();
    std::size_t bytes = 0, taken = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Only this thread takes from the front; the pump only appends.
      while (taken < count &&
             (taken == 0 || bytes + output_outbox_[taken].second <= kOutputPerRequest)) {
        chunks.push_back(output_outbox_[taken].first);
        bytes += output_outbox_[taken].second;
        ++taken;
      }
    }
    Result<nlohmann::json> r =
        event_client_.Post("/api/v1/agent/output", {{"agent", options_.name}, {"chunks", chunks}});
    // Unreachable: keep them for the next try. Refused: resending would not help, and output
    // kept forever would block the tasks; drop them.
    if (!r.ok() && r.status().code() == StatusCode::kUnavailable) return false;
    if (!r.ok()) log::Warning("lockstepd refused task output: {}", r.status().message());
    {
      std::lock_guard<std::mutex> lock(mu_);
      output_outbox_.erase(output_outbox_.begin(),
                           output_outbox_.begin() + static_cast<long>(taken));
    }
    pump_->Ack(bytes);
    count -= taken;
  }
  return true;
}

AgentNode DetectHostNode(const std::string& name) {
  AgentNode n;
  n.name = name;
  n.cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  n.mem_mb = static_cast<std::int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGE_SIZE) /
             (1024 * 1024);
  return n;
}

}  // namespace lockstep::agent
