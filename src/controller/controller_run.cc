// Running jobs: starting them on their agents, ending, requeueing, and the agents' side of
// the API (register, poll for commands, report events).
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "common/hostlist.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/job_convert.h"
#include "controller/job_env.h"
#include "jobspec/output_pattern.h"

namespace lockstep::controller {

void Controller::SendLocked(const std::string& node, nlohmann::json command) {
  std::uint32_t n = NodeIndexLocked(node);
  if (n == engine::kNone) return;
  auto it = agents_.find(nodes_[n].agent);
  if (it == agents_.end()) return;
  command["node"] = node;
  it->second->commands.push_back(std::move(command));
  agent_commands_.notify_all();
}

void Controller::TerminateLocked(JobEntry& job) {
  if (job.state == JobState::kRunning) job.state = JobState::kCompleting;
  TouchLocked(job);
  if (backend_) {
    backend_->Terminate(job.id, job.restart_count, options_.kill_wait);
    return;
  }
  for (const PlacedNode& p : job.placement)
    SendLocked(p.node, {{"type", "terminate"},
                        {"job_id", job.id},
                        {"run", job.restart_count},
                        {"grace_s", options_.kill_wait}});
}

void Controller::StartJobLocked(JobEntry& job, const engine::Allocation& alloc, Time now) {
  job.state = JobState::kRunning;
  job.start_time = now;
  job.reason = "None";
  job.placement.clear();
  TouchLocked(job);
  for (const engine::NodeAllocation& a : alloc.nodes)
    job.placement.push_back({cluster_.base.nodes[a.node].name, a.cpus, a.mem_mb, a.gpus});
  JobId script_id = job.is_array_task() ? job.array_job_id : job.id;
  Result<std::optional<std::string>> blob = store_->Get("scripts", std::to_string(script_id));
  if (!blob.ok() || !blob->has_value()) {
    std::fprintf(stderr, "lockstepd: job %llu: its script is missing from the store\n",
                 static_cast<unsigned long long>(job.id));
    EndJobLocked(job, 1, 0, false, now);
    return;
  }
  nlohmann::json b = nlohmann::json::parse(**blob);
  std::map<std::string, std::string> env = b.at("env").get<std::map<std::string, std::string>>();
  std::string script = b.at("script").get<std::string>();
  if (backend_) {
    backend_->Launch(LaunchOrderLocked(job, std::move(script), std::move(env),
                                       b.value("args", std::vector<std::string>{})));
    return;
  }
  SendLocked(job.placement.front().node, LaunchCommandLocked(job, script, env));
}

LaunchOrder Controller::LaunchOrderLocked(const JobEntry& job, std::string script,
                                          std::map<std::string, std::string> submit_env,
                                          std::vector<std::string> args) const {
  JobEnvInput in = EnvInputLocked(job);
  LaunchOrder o;
  o.job = job.id;
  o.run = job.restart_count;
  o.name = job.spec->name;
  o.user = job.user;
  o.uid = job.uid;
  o.gid = job.gid;
  o.partition = in.partition;
  o.work_dir = job.spec->work_dir;
  o.script = std::move(script);
  o.script_args = std::move(args);
  o.env = BatchEnvironment(in, submit_env);
  o.nodes = job.placement;
  o.tasks_per_node = in.tasks_per_node;
  o.container_image = job.spec->container_image;
  o.time_limit = job.spec->time_limit;
  o.external = job.spec->external;
  return o;
}

nlohmann::json Controller::LaunchCommandLocked(
    const JobEntry& job, const std::string& script,
    const std::map<std::string, std::string>& submit_env) const {
  JobEnvInput in = EnvInputLocked(job);
  std::map<std::string, std::string> env = BatchEnvironment(in, submit_env);
  jobspec::OutputPatternVars vars;
  vars.job_id = job.id;
  vars.array_job_id = job.array_job_id;
  vars.array_task_id = job.array_task_id;
  vars.is_array = job.is_array_task();
  vars.job_name = job.spec->name;
  vars.user = job.user;
  vars.node = job.placement.front().node;
  vars.restart_count = static_cast<std::uint32_t>(job.restart_count);
  auto path = [&](const std::string& pattern) {
    std::string p = jobspec::ExpandOutputPattern(pattern, vars);
    return !p.empty() && p[0] == '/' ? p : job.spec->work_dir + "/" + p;
  };
  std::string out = path(job.spec->output.empty() ? jobspec::DefaultOutputPattern(job.is_array_task())
                                                  : job.spec->output);
  std::string err = job.spec->error.empty() ? out : path(job.spec->error);
  // The agent writes the script to its spool and puts that path in place of @SCRIPT@.
  nlohmann::json task = {{"argv", nlohmann::json::array({"@SCRIPT@"})},
                         {"env", env},
                         {"stdout", out},
                         {"stderr", err},
                         {"append", job.restart_count > 0}};
  for (const std::string& a : job.spec->script_args) task["argv"].push_back(a);
  std::int64_t mem = job.placement.front().mem_mb;
  return {{"type", "launch"}, {"job_id", job.id},          {"step", "batch"},
          {"uid", job.uid},   {"run", job.restart_count},  {"gid", job.gid},
          {"user", job.user}, {"cwd", job.spec->work_dir}, {"script", script},
          {"tasks", {task}},  {"memory_limit_mb", mem},    {"cpus", job.placement.front().cpus}};
}

void Controller::EndJobLocked(JobEntry& job, int exit_code, int signal, bool oom, Time now) {
  job.exit_code = exit_code;
  job.signal = signal;
  job.end_time = now;
  if (job.cancel_requested)
    job.state = JobState::kCancelled;
  else if (job.timed_out)
    job.state = JobState::kTimeout;
  else if (oom)
    job.state = JobState::kOutOfMemory;
  else if (exit_code == 0 && signal == 0)
    job.state = JobState::kCompleted;
  else
    job.state = JobState::kFailed;
  TouchLocked(job);
  for (auto& [key, step] : steps_) {
    if (key.first != job.id || step->state != "RUNNING") continue;
    step->state = job.state == JobState::kCompleted ? "COMPLETED" : "CANCELLED";
    step->end_time = now;
  }
  Status s = PersistLocked({&job});
  if (!s.ok()) std::fprintf(stderr, "lockstepd: store: %s\n", s.ToString().c_str());
  RequestPassLocked();
}

void Controller::RequeueLocked(JobEntry& job, const std::string& reason, Time now) {
  if (backend_) backend_->Terminate(job.id, job.restart_count, 0);
  for (const PlacedNode& p : job.placement) {
    if (backend_) break;
    std::uint32_t n = NodeIndexLocked(p.node);
    if (n != engine::kNone && nodes_[n].responding)
      SendLocked(
          p.node,
          {{"type", "terminate"}, {"job_id", job.id}, {"run", job.restart_count}, {"grace_s", 0}});
  }
  job.state = JobState::kPending;
  TouchLocked(job);
  job.reason = "None";  // the next pass says why it waits
  job.restart_count += 1;
  job.start_time = 0;
  job.placement.clear();
  job.timed_out = false;
  // Slurm holds a requeued job back briefly (requeue_delay); here it may start at the next pass.
  std::fprintf(stderr, "lockstepd: job %llu requeued (%s) at %lld\n",
               static_cast<unsigned long long>(job.id), reason.c_str(),
               static_cast<long long>(now));
  Status s = PersistLocked({&job});
  if (!s.ok()) std::fprintf(stderr, "lockstepd: store: %s\n", s.ToString().c_str());
  RequestPassLocked();
}

// ---- agents ----

Status Controller::AgentRegister(const nlohmann::json& body) {
  if (!body.contains("agent") || !body["agent"].is_string() || !body.contains("nodes") ||
      !body["nodes"].is_array())
    return InvalidArgument("register: needs 'agent' (string) and 'nodes' (array)");
  std::string name = body["agent"].get<std::string>();
  std::string address = body.value("address", "127.0.0.1");
  std::lock_guard<std::mutex> lock(mu_);
  auto& agent = agents_[name];
  if (!agent) agent = std::make_unique<AgentInfo>();
  agent->name = name;
  agent->nodes.clear();
  agent->last_seen = std::chrono::steady_clock::now();
  for (const auto& n : body["nodes"]) {
    std::string node = n.value("name", "");
    std::uint32_t idx = NodeIndexLocked(node);
    if (idx == engine::kNone)
      return NotFound("register: node " + node + " is not in the cluster configuration");
    agent->nodes.push_back(node);
    nodes_[idx].agent = name;
    nodes_[idx].responding = true;
    nodes_[idx].address = address;
  }
  // Adoption: jobs the agent still runs stay RUNNING; a running job on these nodes that the
  // agent does not know has ended while nobody watched.
  // (job, run) pairs: an earlier run of a requeued job is not the job's current run.
  std::set<std::pair<JobId, int>> alive;
  std::set<JobId> alive_jobs;
  for (const auto& r : body.value("running", nlohmann::json::array())) {
    alive.insert({r.value("job_id", JobId{0}), r.value("run", 0)});
    alive_jobs.insert(r.value("job_id", JobId{0}));
  }
  Time now = WallNow();
  for (JobId id : std::vector<JobId>(active_.begin(), active_.end())) {
    JobEntry& e = jobs_.at(id);
    if (e.state != JobState::kRunning && e.state != JobState::kCompleting) continue;
    if (e.placement.empty() || NodeIndexLocked(e.placement.front().node) == engine::kNone) continue;
    if (nodes_[NodeIndexLocked(e.placement.front().node)].agent != name) continue;
    if (!alive.count({id, e.restart_count})) {
      if (e.spec->requeue.value_or(true) && !e.cancel_requested)
        RequeueLocked(e, "NodeFail", now);
      else {
        EndJobLocked(e, 0, 0, false, now);
        e.state = JobState::kNodeFail;
      }
    }
  }
  for (const auto& [id, run] : alive) {
    auto it = jobs_.find(id);
    // Not running any more in lockstepd's eyes (ended, cancelled, or requeued while the agent
    // was unreachable): its processes must go.
    if (it == jobs_.end() || it->second.restart_count != run ||
        (it->second.state != JobState::kRunning && it->second.state != JobState::kCompleting))
      for (const std::string& node : agent->nodes)
        SendLocked(node, {{"type", "terminate"}, {"job_id", id}, {"run", run}, {"grace_s", 0}});
  }
  RequestPassLocked();
  return Status::Ok();
}

nlohmann::json Controller::AgentPoll(const std::string& name, std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = agents_.find(name);
  if (it == agents_.end()) return {{"commands", nlohmann::json::array()}, {"register", true}};
  AgentInfo* agent = it->second.get();
  agent->last_seen = std::chrono::steady_clock::now();
  // An agent that was declared lost registers again: what it still runs is reconciled then.
  for (const std::string& node : agent->nodes) {
    std::uint32_t n = NodeIndexLocked(node);
    if (n != engine::kNone && !nodes_[n].responding)
      return {{"commands", nlohmann::json::array()}, {"register", true}};
  }
  agent_commands_.wait_for(lock, wait, [&] { return stopping_ || !agent->commands.empty(); });
  nlohmann::json out = {{"commands", nlohmann::json::array()}};
  while (!agent->commands.empty()) {
    out["commands"].push_back(std::move(agent->commands.front()));
    agent->commands.pop_front();
  }
  agent->last_seen = std::chrono::steady_clock::now();
  return out;
}

Status Controller::AgentEvents(const nlohmann::json& body) {
  if (!body.contains("events") || !body["events"].is_array())
    return InvalidArgument("events: needs 'events' (array)");
  std::lock_guard<std::mutex> lock(mu_);
  Time now = WallNow();
  for (const auto& ev : body["events"]) {
    std::string type = ev.value("type", "");
    JobId id = ev.value("job_id", JobId{0});
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;
    JobEntry& e = it->second;
    if (type != "exited") continue;
    std::string step =
        ev.contains("step") && ev["step"].is_string() ? ev["step"].get<std::string>() : "";
    int code = ev.value("exit_code", 0), sig = ev.value("signal", 0);
    bool oom = ev.value("oom", false);
    if (step == "batch") {
      // Idempotent: an agent resends events it could not deliver. The end of an earlier run of
      // a requeued job is not the end of this one.
      bool this_run = ev.value("run", e.restart_count) == e.restart_count;
      if (this_run && (e.state == JobState::kRunning || e.state == JobState::kCompleting))
        EndJobLocked(e, code, sig, oom, now);
      continue;
    }
    std::int32_t sid = ev.value("step_id", -1);
    auto st = steps_.find({id, sid});
    if (st == steps_.end()) continue;
    StepInfo& info = *st->second;
    info.nodes_running.erase(ev.value("node", ""));
    info.exit_code = std::max(info.exit_code, code);
    if (sig != 0 && info.signal == 0) info.signal = sig;
    if (info.nodes_running.empty() && info.state == "RUNNING") {
      info.state = info.exit_code == 0 && info.signal == 0 ? "COMPLETED" : "FAILED";
      info.end_time = now;
    }
  }
  agent_commands_.notify_all();
  return Status::Ok();
}

}  // namespace lockstep::controller
