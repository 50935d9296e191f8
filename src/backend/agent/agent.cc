#include "backend/agent/agent.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace lockstep::agent {

struct Agent::Unit {
  std::uint64_t job = 0;
  int run = 0;       // the job's restart count when launched
  std::string step;  // "batch" or "step"
  std::int32_t step_id = -1;
  std::string node;
  std::set<pid_t> alive;
  std::vector<pid_t> pids;
  int exit_code = 0, signal = 0;
  bool oom = false;
  std::string script_dir;  // removed when a batch unit ends
};

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
  std::error_code ec;
  std::filesystem::create_directories(options.spool_dir, ec);
  if (ec) return IoError("cannot create spool " + options.spool_dir + ": " + ec.message());
  Launcher::Options lo;
  lo.cgroup_root = options.cgroup_root;
  Result<std::unique_ptr<Launcher>> l = Launcher::Create(lo);
  if (!l.ok()) return l.status();
  a->launcher_ = std::move(*l);
  return a;
}

Agent::~Agent() {
  Stop();
  if (reaper_.joinable()) reaper_.join();
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
    for (auto& [pid, exit] : launcher_->Reap()) by_pid_.erase(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status Agent::Register() {
  nlohmann::json nodes = nlohmann::json::array();
  for (const AgentNode& n : options_.nodes) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const AgentNode::Gpu& g : n.gpus)
      gpus.push_back({{"index", g.index}, {"uuid", g.uuid}, {"type", g.type}});
    nodes.push_back({{"name", n.name}, {"cpus", n.cpus}, {"mem_mb", n.mem_mb}, {"gpus", gpus}});
  }
  nlohmann::json running = nlohmann::json::array();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& u : units_)
      if (!u->alive.empty())
        running.push_back(
            {{"job_id", u->job}, {"run", u->run}, {"step", u->step}, {"node", u->node}});
  }
  Result<nlohmann::json> r =
      poll_client_.Post("/api/v1/agent/register", {{"agent", options_.name},
                                                   {"address", options_.address},
                                                   {"nodes", nodes},
                                                   {"running", running}});
  return r.ok() ? Status::Ok() : r.status();
}

void Agent::Run() {
  reaper_ = std::thread([this] { ReapLoop(); });
  bool registered = false;
  while (!stopping_) {
    if (!registered) {
      Status s = Register();
      if (!s.ok()) {
        std::fprintf(stderr, "lockstep-agent: %s; retrying\n", s.message().c_str());
        std::this_thread::sleep_for(std::chrono::seconds(1));
        continue;
      }
      registered = true;
    }
    Result<nlohmann::json> r = poll_client_.Get(
        "/api/v1/agent/commands?agent=" + client::UrlEncode(options_.name) + "&wait_ms=2000");
    if (!r.ok()) {
      registered = false;  // lockstepd went away: register again when it is back
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    if (r->value("register", false)) registered = false;
    for (const auto& c : (*r)["commands"]) HandleCommand(c);
  }
}

void Agent::HandleCommand(const nlohmann::json& c) {
  std::string type = c.value("type", "");
  std::uint64_t job = c.value("job_id", std::uint64_t{0});
  if (type == "launch")
    Launch(c);
  else if (type == "signal")
    SignalJob(job, c.value("signal", 15));
  else if (type == "terminate")
    TerminateJob(job, c.value("grace_s", 30), c.value("run", -1));
}

void Agent::Launch(const nlohmann::json& c) {
  auto unit = std::make_shared<Unit>();
  unit->job = c.value("job_id", std::uint64_t{0});
  unit->run = c.value("run", 0);
  unit->step = c.value("step", "batch");
  unit->step_id = c.value("step_id", -1);
  unit->node = c.value("node", "");
  uid_t uid = c.value("uid", 0u);
  gid_t gid = c.value("gid", 0u);
  std::string script_path;
  if (c.contains("script")) {
    // The script goes to the spool, readable only by the job's user.
    unit->script_dir = options_.spool_dir + "/job" + std::to_string(unit->job);
    std::filesystem::create_directories(unit->script_dir);
    script_path = unit->script_dir + "/script";
    std::ofstream(script_path) << c["script"].get<std::string>();
    ::chmod(script_path.c_str(), 0700);
    if (::chown(unit->script_dir.c_str(), uid, gid) != 0 ||
        ::chown(script_path.c_str(), uid, gid) != 0) {
      // Not root: the agent runs only its own user's jobs, which already own the file.
    }
  }
  int failures = 0;
  const std::uint64_t launch_seq = ++launches_;
  for (const auto& t : c["tasks"]) {
    TaskSpec spec;
    for (const auto& a : t["argv"]) {
      std::string arg = a.get<std::string>();
      spec.argv.push_back(arg == "@SCRIPT@" ? script_path : arg);
    }
    spec.env = t["env"].get<std::map<std::string, std::string>>();
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
    spec.memory_limit_mb = c.value("memory_limit_mb", std::int64_t{0});
    // Unique on this host: agents share the cgroup root, and a requeued job may come back
    // before its old cgroup is gone.
    spec.cgroup_name = "a" + std::to_string(::getpid()) + "_job" + std::to_string(unit->job) + "_" +
                       std::to_string(launch_seq) + "/" + unit->node + "_" + unit->step +
                       (unit->step_id >= 0 ? "_" + std::to_string(unit->step_id) : "") + "_" +
                       std::to_string(unit->pids.size());
    Result<pid_t> pid = launcher_->Spawn(spec);
    if (!pid.ok()) {
      std::fprintf(stderr, "lockstep-agent: job %llu: %s\n",
                   static_cast<unsigned long long>(unit->job), pid.status().message().c_str());
      ++failures;
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    unit->pids.push_back(*pid);
    unit->alive.insert(*pid);
    by_pid_[*pid] = unit;
  }
  std::lock_guard<std::mutex> lock(mu_);
  units_.push_back(unit);
  if (unit->alive.empty()) {
    // Nothing could start (no such program, a cwd that does not exist): the step failed.
    Report({{"type", "exited"},
            {"job_id", unit->job},
            {"run", unit->run},
            {"step", unit->step},
            {"step_id", unit->step_id},
            {"node", unit->node},
            {"exit_code", failures > 0 ? 1 : 0},
            {"signal", 0},
            {"oom", false}});
  }
}

void Agent::SignalJob(std::uint64_t job, int signo) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& u : units_)
    if (u->job == job)
      for (pid_t p : u->alive) (void)launcher_->Signal(p, signo);
}

void Agent::TerminateJob(std::uint64_t job, int grace_s, int run) {
  std::vector<pid_t> pids;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& u : units_)
    if (u->job == job && (run < 0 || u->run == run))
      pids.insert(pids.end(), u->alive.begin(), u->alive.end());
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
      std::lock_guard<std::mutex> lock(mu_);
      auto it = by_pid_.find(pid);
      if (it == by_pid_.end()) continue;
      std::shared_ptr<Unit> u = it->second;
      by_pid_.erase(it);
      u->alive.erase(pid);
      u->exit_code = std::max(u->exit_code, exit.exit_code);
      if (exit.signal != 0 && u->signal == 0) u->signal = exit.signal;
      u->oom |= exit.oom_killed;
      if (!u->alive.empty()) continue;
      Report({{"type", "exited"},
              {"job_id", u->job},
              {"run", u->run},
              {"step", u->step},
              {"step_id", u->step_id},
              {"node", u->node},
              {"exit_code", u->exit_code},
              {"signal", u->signal},
              {"oom", u->oom}});
      if (!u->script_dir.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(u->script_dir, ec);
      }
      std::erase(units_, u);
    }
    SendEvents();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void Agent::SendEvents() {
  std::vector<nlohmann::json> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (outbox_.empty()) return;
    batch.swap(outbox_);
  }
  Result<nlohmann::json> r =
      event_client_.Post("/api/v1/agent/events", {{"agent", options_.name}, {"events", batch}});
  if (r.ok()) return;
  // Keep them for the next try, in order.
  std::lock_guard<std::mutex> lock(mu_);
  outbox_.insert(outbox_.begin(), batch.begin(), batch.end());
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
