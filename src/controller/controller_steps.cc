// Job steps: `srun` inside an allocation starts tasks across the job's nodes, with each task's
// rank, local rank and GPUs in its environment. A step that streams has its tasks' output sent
// by the agents (AgentOutput) into a buffer that srun reads (StepOutput).
#include <signal.h>

#include <algorithm>

#include "common/base64.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/job_env.h"

namespace lockstep::controller {
namespace {

// How long the output of an ended step is kept for an srun that has not read its end.
constexpr Time kOutputKeepSeconds = 60;
// The most output one read answers with (before base64).
constexpr std::size_t kReadMax = 1 << 20;
// How often a waiting read looks at the step's state (its end is not signalled to it).
constexpr auto kStateRecheck = std::chrono::milliseconds(100);

}  // namespace

Result<nlohmann::json> Controller::CreateStep(const Caller& caller, JobId id,
                                              const nlohmann::json& req) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<JobEntry*> found = FindLocked(id);
  if (!found.ok()) return found.status();
  JobEntry& job = **found;
  LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, job));
  if (backend_)  // pods run the batch script on every node; there is no agent to start steps
    return FailedPrecondition(
        "srun inside a job is not supported on the kubernetes backend: "
        "the job's pods already run on every node of its allocation");
  if (job.state != JobState::kRunning)
    return FailedPrecondition("job " + job.DisplayId() + " is not running");
  if (!req.contains("argv") || !req["argv"].is_array() || req["argv"].empty())
    return InvalidArgument("step: 'argv' must be a non-empty array");
  JobEnvInput in = EnvInputLocked(job);
  int node_count = std::clamp(req.value("nodes", 0), 0, static_cast<int>(in.nodes.size()));
  if (node_count == 0) node_count = static_cast<int>(in.nodes.size());
  int per_node = req.value("ntasks_per_node", 0);
  int ntasks = req.value("ntasks", 0);
  if (ntasks <= 0)
    ntasks =
        per_node > 0 ? per_node * node_count : std::min(in.ntasks, std::max(in.ntasks, node_count));
  if (ntasks < node_count) node_count = ntasks;
  int gpus_per_task = req.value("gpus_per_task", 0);
  StepTask t;
  t.step_id = job.next_step_id++;
  t.step_tasks = ntasks;
  for (int i = 0; i < node_count; ++i) {
    t.step_nodes.push_back(in.nodes[i]);
    t.step_tasks_per_node.push_back(
        per_node > 0 ? per_node : ntasks / node_count + (i < ntasks % node_count ? 1 : 0));
  }
  auto step = std::make_unique<StepInfo>();
  step->job = id;
  step->step = t.step_id;
  step->name = req["argv"][0].get<std::string>();
  step->nodes = t.step_nodes;
  step->ntasks = ntasks;
  step->start_time = WallNow();
  std::map<std::string, std::string> base = req.value("env", std::map<std::string, std::string>{});
  // Streamed: the agents send the tasks' output to lockstepd, where srun reads it from any host.
  // Else the tasks write the files named (on their own nodes).
  const bool stream = req.value("stream", false);
  std::string out = req.value("stdout", ""), err = req.value("stderr", "");
  int rank = 0;
  for (int i = 0; i < node_count; ++i) {
    nlohmann::json tasks = nlohmann::json::array();
    const std::vector<int>& node_gpus = in.gpus_per_node[i];
    for (int local = 0; local < t.step_tasks_per_node[i]; ++local, ++rank) {
      t.rank = rank, t.node_index = i, t.local_rank = local;
      t.gpus = node_gpus;
      if (gpus_per_task > 0) {
        t.gpus.clear();
        for (int g = local * gpus_per_task;
             g < (local + 1) * gpus_per_task && g < static_cast<int>(node_gpus.size()); ++g)
          t.gpus.push_back(node_gpus[g]);
      }
      nlohmann::json task = {
          {"argv", req["argv"]}, {"env", StepTaskEnvironment(in, t, base)}, {"rank", rank}};
      if (!stream) {
        task["stdout"] = out;
        task["stderr"] = err.empty() ? out : err;
        task["append"] = true;
      }
      tasks.push_back(std::move(task));
    }
    step->nodes_running.insert(in.nodes[i]);
    SendLocked(in.nodes[i], {{"type", "launch"},
                             {"job_id", id},
                             {"step", "step"},
                             {"step_id", t.step_id},
                             {"uid", job.uid},
                             {"gid", job.gid},
                             {"user", job.user},
                             {"cwd", req.value("cwd", job.spec->work_dir)},
                             {"tasks", std::move(tasks)},
                             {"memory_limit_mb", 0},
                             {"cpus", 0},
                             {"stream_output", stream}});
  }
  FreeStepOutputsLocked(WallNow());
  if (stream) step_outputs_.Open({id, t.step_id});
  nlohmann::json answer = {
      {"job_id", id}, {"step_id", t.step_id}, {"nodes", t.step_nodes}, {"ntasks", ntasks}};
  steps_[{id, t.step_id}] = std::move(step);
  (void)PersistLocked({&job});
  return answer;
}

Result<nlohmann::json> Controller::ShowStep(JobId id, std::int32_t step) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = steps_.find({id, step});
  if (it == steps_.end())
    return NotFound("no step " + std::to_string(id) + "." + std::to_string(step));
  const StepInfo& s = *it->second;
  return nlohmann::json{{"job_id", id},
                        {"step_id", step},
                        {"state", s.state},
                        {"exit_code", s.exit_code},
                        {"signal", s.signal}};
}

}  // namespace lockstep::controller

namespace lockstep::controller {

Result<nlohmann::json> Controller::StepOutput(const Caller& caller, JobId id, std::int32_t step,
                                              std::uint64_t offset,
                                              std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  Result<JobEntry*> job = FindLocked(id);
  if (!job.ok()) return job.status();
  LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, **job));
  const StepOutputs::Key key{id, step};
  if (!steps_.count(key))
    return NotFound("no step " + std::to_string(id) + "." + std::to_string(step));
  // Wait for bytes past `offset` or the step's end; its end comes in through AgentEvents,
  // which does not wake this wait, hence the rechecks.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto ready = [&] {
    const StepOutputBuffer* b = step_outputs_.Find(key);
    return steps_.at(key)->state != "RUNNING" || (b && b->end() > offset);
  };
  while (!ready() && std::chrono::steady_clock::now() < deadline)
    step_output_arrived_.wait_for(lock,
                                  std::min<std::chrono::steady_clock::duration>(
                                      kStateRecheck, deadline - std::chrono::steady_clock::now()));
  const bool ended = steps_.at(key)->state != "RUNNING";
  StepOutputBuffer* buffer = step_outputs_.Find(key);
  StepOutputBuffer::Read r;
  r.next = offset;
  if (buffer) r = buffer->ReadFrom(offset, kReadMax);
  nlohmann::json chunks = nlohmann::json::array();
  for (const StepOutputBuffer::Chunk& c : r.chunks)
    chunks.push_back({{"rank", c.rank},
                      {"stream", c.is_stderr ? "stderr" : "stdout"},
                      {"data", Base64Encode(c.data)}});
  const bool done = ended && (!buffer || r.next == buffer->end());
  // srun has read everything: the buffer goes (a later read answers done with nothing).
  if (done && buffer) step_outputs_.Free(key);
  return nlohmann::json{{"job_id", id},         {"step_id", step}, {"offset", r.next},
                        {"dropped", r.dropped}, {"done", done},    {"chunks", std::move(chunks)}};
}

Status Controller::SignalStep(const Caller& caller, JobId id, std::int32_t step, int signal) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<JobEntry*> job = FindLocked(id);
  if (!job.ok()) return job.status();
  LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, **job));
  auto it = steps_.find({id, step});
  if (it == steps_.end())
    return NotFound("no step " + std::to_string(id) + "." + std::to_string(step));
  const StepInfo& s = *it->second;
  if (s.state != "RUNNING") return Status::Ok();
  for (const std::string& node : s.nodes_running) {
    if (signal == 0)
      SendLocked(node, {{"type", "terminate"},
                        {"job_id", id},
                        {"step_id", step},
                        {"grace_s", options_.kill_wait}});
    else
      SendLocked(node, {{"type", "signal"}, {"job_id", id}, {"step_id", step}, {"signal", signal}});
  }
  return Status::Ok();
}

Status Controller::AgentOutput(const nlohmann::json& body) {
  if (!body.contains("chunks") || !body["chunks"].is_array())
    return InvalidArgument("output: needs 'chunks' (array)");
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& c : body["chunks"]) {
    StepOutputBuffer* buffer =
        step_outputs_.Find({c.value("job_id", JobId{0}), c.value("step_id", std::int32_t{-1})});
    if (!buffer) continue;  // srun is gone and its step's output with it
    Result<std::string> data = Base64Decode(c.value("data", ""));
    if (!data.ok()) continue;  // refusing the request would only have the agent resend it
    buffer->Append(c.value("rank", 0), c.value("stream", "") == "stderr", *data);
  }
  FreeStepOutputsLocked(WallNow());
  step_output_arrived_.notify_all();
  return Status::Ok();
}

void Controller::FreeStepOutputsLocked(Time now) {
  for (const StepOutputs::Key& key : step_outputs_.Keys()) {
    auto it = steps_.find(key);
    if (it == steps_.end() ||
        (it->second->state != "RUNNING" && it->second->end_time + kOutputKeepSeconds < now))
      step_outputs_.Free(key);
  }
}

}  // namespace lockstep::controller
