// Job steps: `srun` inside an allocation starts tasks across the job's nodes, with each task's
// rank, local rank and GPUs in its environment. A step that streams has its tasks' output sent
// by the backend (EventSink::StepOutput) into a buffer that srun reads (StepOutput).
#include <signal.h>

#include <algorithm>

#include "common/base64.h"
#include "common/hostlist.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/job_env.h"
#include "jobspec/output_pattern.h"

namespace lockstep::controller {
namespace {

// How long the output of an ended step is kept for an srun that has not read its end.
constexpr Time kOutputKeepSeconds = 60;
// The most output one read answers with (before base64).
constexpr std::size_t kReadMax = 1 << 20;

}  // namespace

namespace {

// A request's integer field, range-checked: absent gives `absent`.
Result<int> IntField(const nlohmann::json& req, const char* key, int absent, int lo, int hi) {
  if (!req.contains(key)) return absent;
  const nlohmann::json& v = req[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
    return InvalidArgument(std::string("step: '") + key + "' must be an integer from " +
                           std::to_string(lo) + " to " + std::to_string(hi));
  return static_cast<int>(v.get<std::int64_t>());
}

Result<std::map<std::string, std::string>> StringMap(const nlohmann::json& req, const char* key) {
  std::map<std::string, std::string> out;
  if (!req.contains(key)) return out;
  if (!req[key].is_object()) return InvalidArgument(std::string("step: '") + key + "' must be an object");
  for (const auto& [k, v] : req[key].items()) {
    if (!v.is_string())
      return InvalidArgument(std::string("step: '") + key + "." + k + "' must be a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

Result<std::string> StringField(const nlohmann::json& req, const char* key,
                                const std::string& absent) {
  if (!req.contains(key)) return absent;
  if (!req[key].is_string()) return InvalidArgument(std::string("step: '") + key + "' must be a string");
  return req[key].get<std::string>();
}

// What srun asked for, decoded and checked before anything changes.
struct StepRequest {
  std::vector<std::string> argv;
  int nodes = 0, ntasks_per_node = 0, ntasks = 0, gpus_per_task = 0;
  std::map<std::string, std::string> env;
  bool stream = false;
  std::string stdout_path, stderr_path, cwd;
  std::vector<std::string> nodelist;  // -w: the job's nodes the step runs on (empty: the first)
  std::string srun_host;              // where srun runs, and its pid: shown, never used
  int srun_pid = 0;
  // srun --mpi (or SLURM_MPI_TYPE): "none", "pmix" or "pmi2"; "" when srun named none.
  std::string mpi;
  bool UsesMpi() const { return !mpi.empty() && mpi != "none"; }
  // srun --het-group: the components of a heterogeneous job whose nodes the step runs on, in
  // order; empty: the first (or the whole job when it is not heterogeneous).
  std::vector<int> het_groups;
  // srun A : B (MPMD): one part per component, in order, each with its own command and task
  // count (0: the component's); het_groups then names their components.
  struct HetPart {
    int group = 0;
    int ntasks = 0;
    std::vector<std::string> argv;
  };
  std::vector<HetPart> het_parts;
};

// Where a step's tasks go: nodes (indexes into the step's view of the allocation), how many
// tasks on each, and which command each node's tasks run (an index into the step's commands).
struct StepLayout {
  std::vector<int> nodes;
  std::vector<std::int32_t> tasks_per_node;
  std::vector<int> command_of_node;
  std::int64_t ntasks = 0;
};

// srun --mpi's type: "pmix" (pmix_v4 is its version's name), "pmi2" or "none"; anything else
// refused in srun's words.
Result<std::string> MpiType(const std::string& type) {
  if (type == "pmix" || type == "pmix_v4") return std::string("pmix");
  if (type == "pmi2" || type == "none") return type;
  return InvalidArgument("step: Invalid MPI type '" + type + "', --mpi=list for acceptable types");
}

Result<StepRequest> DecodeStepRequest(const nlohmann::json& req, const std::string& work_dir) {
  if (!req.is_object()) return InvalidArgument("step: the body must be an object");
  StepRequest r;
  if (!req.contains("argv") || !req["argv"].is_array() || req["argv"].empty())
    return InvalidArgument("step: 'argv' must be a non-empty array");
  for (const auto& a : req["argv"]) {
    if (!a.is_string()) return InvalidArgument("step: 'argv' must hold strings");
    r.argv.push_back(a.get<std::string>());
  }
  constexpr int kMax = 1 << 20;
  Result<int> nodes = IntField(req, "nodes", 0, 0, kMax);
  Result<int> per_node = IntField(req, "ntasks_per_node", 0, 0, kMax);
  Result<int> ntasks = IntField(req, "ntasks", 0, 0, kMax);
  Result<int> gpus = IntField(req, "gpus_per_task", 0, 0, 64);
  for (const Result<int>* f : {&nodes, &per_node, &ntasks, &gpus})
    if (!f->ok()) return f->status();
  r.nodes = *nodes, r.ntasks_per_node = *per_node, r.ntasks = *ntasks, r.gpus_per_task = *gpus;
  Result<std::map<std::string, std::string>> env = StringMap(req, "env");
  if (!env.ok()) return env.status();
  r.env = std::move(*env);
  if (req.contains("stream") && !req["stream"].is_boolean())
    return InvalidArgument("step: 'stream' must be true or false");
  r.stream = req.value("stream", false);
  Result<std::string> out = StringField(req, "stdout", "");
  Result<std::string> err = StringField(req, "stderr", "");
  Result<std::string> cwd = StringField(req, "cwd", work_dir);
  for (const Result<std::string>* f : {&out, &err, &cwd})
    if (!f->ok()) return f->status();
  r.stdout_path = *out, r.stderr_path = *err, r.cwd = *cwd;
  Result<std::string> srun_host = StringField(req, "srun_host", "");
  Result<int> srun_pid = IntField(req, "srun_pid", 0, 0, 0x7fffffff);
  if (!srun_host.ok()) return srun_host.status();
  if (!srun_pid.ok()) return srun_pid.status();
  r.srun_host = *srun_host, r.srun_pid = *srun_pid;
  if (req.contains("het_parts")) {
    const nlohmann::json& parts = req["het_parts"];
    if (!parts.is_array() || parts.empty() || parts.size() > jobspec::kMaxHetComponents)
      return InvalidArgument("step: 'het_parts' must be an array of 1 to 128 parts");
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const nlohmann::json& part = parts[i];
      if (!part.is_object() || !part.contains("argv") || !part["argv"].is_array() ||
          part["argv"].empty())
        return InvalidArgument("step: het_parts[" + std::to_string(i) +
                               "] must be an object with a non-empty 'argv'");
      StepRequest::HetPart& h = r.het_parts.emplace_back();
      h.group = static_cast<int>(i);
      Result<int> n = IntField(part, "ntasks", 0, 0, kMax);
      if (!n.ok()) return n.status();
      h.ntasks = *n;
      for (const auto& a : part["argv"]) {
        if (!a.is_string()) return InvalidArgument("step: 'argv' must hold strings");
        h.argv.push_back(a.get<std::string>());
      }
      r.het_groups.push_back(h.group);
    }
  }
  if (req.contains("het_groups") && r.het_parts.empty()) {
    const nlohmann::json& groups = req["het_groups"];
    if (!groups.is_array() || groups.size() > jobspec::kMaxHetComponents)
      return InvalidArgument("step: 'het_groups' must be an array of component offsets");
    for (const auto& g : groups) {
      if (!g.is_number_integer() || g.get<std::int64_t>() < 0 ||
          g.get<std::int64_t>() >= std::int64_t{jobspec::kMaxHetComponents})
        return InvalidArgument("step: 'het_groups' must hold component offsets from 0 to 127");
      r.het_groups.push_back(g.get<int>());
    }
  }
  Result<std::string> mpi = StringField(req, "mpi", "");
  if (!mpi.ok()) return mpi.status();
  if (!mpi->empty()) {
    Result<std::string> mpi_type = MpiType(*mpi);
    if (!mpi_type.ok()) return mpi_type.status();
    r.mpi = *mpi_type;
  }
  Result<std::string> nodelist = StringField(req, "nodelist", "");
  if (!nodelist.ok()) return nodelist.status();
  if (!nodelist->empty()) {
    Result<std::vector<std::string>> hosts = ExpandHostlist(*nodelist);
    if (!hosts.ok()) return InvalidArgument("step: 'nodelist': " + hosts.status().message());
    r.nodelist = std::move(*hosts);
  }
  return r;
}

// The indexes (in the job's node order) of the nodes a step runs on: those -w named, each of
// which must be the job's, else the first `count` (0: all).
Result<std::vector<int>> StepNodeIndexes(const std::vector<std::string>& job_nodes,
                                         const std::vector<std::string>& nodelist, int count,
                                         const std::string& job_id) {
  std::vector<int> out;
  if (nodelist.empty()) {
    const int n = count == 0 ? static_cast<int>(job_nodes.size())
                             : std::min(count, static_cast<int>(job_nodes.size()));
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (std::size_t i = 0; i < job_nodes.size(); ++i)
    if (std::find(nodelist.begin(), nodelist.end(), job_nodes[i]) != nodelist.end())
      out.push_back(static_cast<int>(i));
  for (const std::string& name : nodelist)
    if (std::find(job_nodes.begin(), job_nodes.end(), name) == job_nodes.end())
      return InvalidArgument("step: Unable to create step for job " + job_id + ": node " + name +
                             " is not in the job's allocation (Requested node configuration is "
                             "not available)");
  return out;
}

// The file a task of the step reads with --input=FILE: Slurm's filename pattern, for this task.
std::string StepInputPath(const std::string& pattern, const JobEntry& job, const StepTask& t,
                          const std::string& node, const std::string& cwd) {
  jobspec::OutputPatternVars v;
  v.job_id = job.id;
  v.array_job_id = job.id;
  v.job_name = job.spec->name;
  v.user = job.user;
  v.node = node;
  v.node_id = static_cast<std::uint32_t>(t.node_index);
  v.task_id = static_cast<std::uint32_t>(t.rank);
  v.step_id = static_cast<std::uint32_t>(t.step_id);
  std::string path = jobspec::ExpandOutputPattern(pattern, v);
  return path.empty() || path.front() == '/' ? path : cwd + "/" + path;
}

// Node i's share of `tasks` spread evenly over `nodes` nodes: the first ones one more.
std::int32_t EvenShare(std::int64_t tasks, int nodes, int i) {
  return static_cast<std::int32_t>(tasks / nodes + (i < tasks % nodes ? 1 : 0));
}

// "step: <who>: N tasks requested but <holder> C CPUs (...)" when `tasks` need more than one
// CPU each of those held (Slurm's answer without --overcommit), so that a step can never ask
// lockstepd to build more tasks than its job holds.
Status CheckTasksFitCpus(std::int64_t tasks, const std::vector<std::int32_t>& cpus_per_node,
                         const std::string& who, const std::string& holder) {
  std::int64_t cpus = 0;
  for (std::int32_t c : cpus_per_node) cpus += c;
  if (tasks <= std::max<std::int64_t>(cpus, 1)) return Status::Ok();
  return InvalidArgument("step: " + who + ": " + std::to_string(tasks) + " tasks requested but " +
                         holder + " " + std::to_string(cpus) +
                         " CPUs (More processors requested than permitted)");
}

// The layout of an ordinary step: -w's nodes or the first -N (all without), -n tasks spread
// evenly (the job's own count without -n, -N or -w), bounded by the CPUs held.
Result<StepLayout> UniformStepLayout(const JobEnvInput& in, const StepRequest& req,
                                     const std::string& job_id) {
  Result<std::vector<int>> chosen = StepNodeIndexes(in.nodes, req.nodelist, req.nodes, job_id);
  if (!chosen.ok()) return chosen.status();
  int node_count = static_cast<int>(chosen->size());
  const int per_node = req.ntasks_per_node;
  std::int64_t ntasks = req.ntasks;
  // A heterogeneous step without sizes runs each component's own tasks on its own nodes.
  const bool own_tasks = req.het_groups.size() > 1 && ntasks <= 0 && req.nodes == 0 &&
                         req.nodelist.empty() && per_node == 0;
  // Without -n, as Slurm's srun: -N or -w alone gives one task per node of the step, not the
  // job's own task count (srun passes SLURM_NTASKS on as -n when the job set it).
  if (ntasks <= 0 && per_node == 0 && (req.nodes > 0 || !req.nodelist.empty()))
    ntasks = node_count;
  if (ntasks <= 0) ntasks = per_node > 0 ? std::int64_t{per_node} * node_count : in.ntasks;
  LOCKSTEP_RETURN_IF_ERROR(CheckTasksFitCpus(
      ntasks, in.cpus_per_node, "Unable to create step for job " + job_id, "the job holds"));
  if (ntasks < node_count) node_count = static_cast<int>(ntasks);
  StepLayout out;
  out.ntasks = ntasks;
  for (int i = 0; i < node_count; ++i) {
    out.nodes.push_back((*chosen)[i]);
    out.tasks_per_node.push_back(
        own_tasks ? in.tasks_per_node[(*chosen)[i]]
        : per_node > 0 ? per_node
                       : EvenShare(ntasks, node_count, i));
    out.command_of_node.push_back(0);
  }
  return out;
}

// srun A : B: each part's tasks (its own -n, else its component's count) spread evenly over its
// component's nodes (no more nodes than tasks), with its own command. `in` lists the parts'
// components' nodes in the parts' order (Controller::StepAllocationLocked).
Result<StepLayout> HetPartsLayout(const JobEnvInput& in, const StepRequest& req) {
  StepLayout out;
  int first = 0;  // the part's first node in `in`
  for (std::size_t p = 0; p < req.het_parts.size(); ++p) {
    const StepRequest::HetPart& part = req.het_parts[p];
    const JobEnvInput& c = in.het_components.size() > static_cast<std::size_t>(part.group)
                               ? in.het_components[part.group]
                               : in;
    const int nodes = static_cast<int>(c.nodes.size());
    const std::int64_t tasks = part.ntasks > 0 ? part.ntasks : c.ntasks;
    const std::string who = "component " + std::to_string(part.group);
    LOCKSTEP_RETURN_IF_ERROR(CheckTasksFitCpus(tasks, c.cpus_per_node, who, "it holds"));
    if (nodes == 0) return InvalidArgument("step: " + who + " holds no nodes");
    const int used = static_cast<int>(std::min<std::int64_t>(nodes, tasks));
    for (int i = 0; i < used; ++i) {
      out.nodes.push_back(first + i);
      out.tasks_per_node.push_back(EvenShare(tasks, used, i));
      out.command_of_node.push_back(static_cast<int>(p));
    }
    out.ntasks += tasks;
    first += nodes;
  }
  return out;
}

}  // namespace

Result<nlohmann::json> Controller::CreateStep(const Caller& caller, JobId id,
                                              const nlohmann::json& body) {
  HeldLock lock(*this);
  Result<JobEntry*> found = FindLocked(id);
  if (!found.ok()) return found.status();
  JobEntry& job = **found;
  LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, job));
  if (!supports_steps_)
    return FailedPrecondition("srun inside a job is not supported on this backend");
  if (job.state != JobState::kRunning)
    return FailedPrecondition("job " + job.DisplayId() + " is not running");
  Result<StepRequest> req = DecodeStepRequest(body, job.spec->work_dir);
  if (!req.ok()) return req.status();
  if (req->UsesMpi() && !supports_mpi_)
    return FailedPrecondition("step: --mpi=" + req->mpi +
                              " needs lockstep's agents (their PMIx server); this backend runs "
                              "steps without one: use --mpi=none (docs/mpi.md)");
  Result<StepInputRequest> input = DecodeStepInputRequest(body);
  if (!input.ok()) return input.status();
  Result<JobEnvInput> allocation = StepAllocationLocked(job, req->het_groups);
  if (!allocation.ok()) return allocation.status();
  JobEnvInput& in = *allocation;
  Result<StepLayout> layout = req->het_parts.empty()
                                  ? UniformStepLayout(in, *req, job.DisplayId())
                                  : HetPartsLayout(in, *req);
  if (!layout.ok()) return layout.status();
  const std::int64_t ntasks = layout->ntasks;
  const int node_count = static_cast<int>(layout->nodes.size());
  if (input->mode == StepInputRequest::Mode::kTask && input->task >= ntasks)
    return InvalidArgument("step: --input=" + std::to_string(input->task) +
                           ": no such task in a step of " + std::to_string(ntasks) + " task" +
                           (ntasks == 1 ? "" : "s"));
  StepTask t;
  t.step_id = job.next_step_id++;
  t.step_tasks = static_cast<std::int32_t>(ntasks);
  for (int i = 0; i < node_count; ++i) t.step_nodes.push_back(in.nodes[layout->nodes[i]]);
  t.step_tasks_per_node = layout->tasks_per_node;
  auto step = std::make_unique<StepInfo>();
  step->job = id;
  step->step = t.step_id;
  step->name = req->argv.front();
  step->nodes = t.step_nodes;
  step->ntasks = t.step_tasks;
  step->start_time = clock_.Now();
  step->srun_host = req->srun_host;
  step->srun_pid = req->srun_pid;
  // Streamed: the agents send the tasks' output to lockstepd, where srun reads it from any host.
  // Else the tasks write the files named (on their own nodes).
  backend::StepLaunch launch;
  launch.job = id;
  launch.run = job.restart_count;
  launch.step = t.step_id;
  launch.uid = job.uid;
  launch.gid = job.gid;
  launch.user = job.user;
  launch.cwd = req->cwd;
  launch.stream_output = req->stream;
  launch.pty = input->pty;
  launch.rows = input->rows, launch.cols = input->cols;
  if (req->UsesMpi()) launch.mpi = req->mpi;
  launch.input = this;
  std::vector<std::string> input_readers;  // the nodes with a task that reads srun's input
  // A heterogeneous job's SLURM_*_HET_GROUP_n: the same for every task, made once.
  std::map<std::string, std::string> het_vars;
  AddHetGroupVariables(in, het_vars);
  int rank = 0;
  for (int i = 0; i < node_count; ++i) {
    const int n = layout->nodes[i];  // the node's index in the job
    std::vector<backend::StepTask>& tasks = launch.tasks_by_node[in.nodes[n]];
    const std::vector<int>& node_gpus = in.gpus_per_node[n];
    const std::vector<std::string>& node_cuda = in.cuda_devices_per_node[n];
    for (int local = 0; local < t.step_tasks_per_node[i]; ++local, ++rank) {
      t.rank = rank, t.node_index = i, t.local_rank = local;  // the step's node index
      t.gpus = node_gpus;
      t.cuda_devices = node_cuda;
      if (req->gpus_per_task > 0) {
        t.gpus.clear();
        t.cuda_devices.clear();
        for (int g = local * req->gpus_per_task;
             g < (local + 1) * req->gpus_per_task && g < static_cast<int>(node_gpus.size()); ++g) {
          t.gpus.push_back(node_gpus[g]);
          t.cuda_devices.push_back(node_cuda[g]);
        }
      }
      backend::StepTask task;
      task.argv = req->het_parts.empty() ? req->argv
                                         : req->het_parts[layout->command_of_node[i]].argv;
      task.env = StepTaskEnvironment(in, t, req->env);
      if (job.is_het_component()) {  // the leader's id, whichever components run the step
        for (const auto& [name, value] : het_vars) task.env[name] = value;
        task.env["SLURM_JOB_ID"] = task.env["SLURM_JOBID"] = std::to_string(job.het_job_id);
      }
      if (!req->mpi.empty()) task.env["SLURM_MPI_TYPE"] = req->mpi;  // as srun resolved it
      task.rank = rank;
      if (!req->stream) {
        task.stdout_path = req->stdout_path;
        task.stderr_path = req->stderr_path.empty() ? req->stdout_path : req->stderr_path;
      }
      task.stdin_forwarded = input->Forwards(rank);
      if (task.stdin_forwarded &&
          (input_readers.empty() || input_readers.back() != in.nodes[n]))
        input_readers.push_back(in.nodes[n]);
      if (input->mode == StepInputRequest::Mode::kFile)
        task.stdin_path = StepInputPath(input->file, job, t, in.nodes[n], req->cwd);
      tasks.push_back(std::move(task));
    }
    step->nodes_running.insert(in.nodes[n]);
  }
  SendLocked({Command::LaunchStep{std::move(launch)}});
  FreeStepOutputsLocked(clock_.Now());
  if (req->stream) step_outputs_.Open({id, t.step_id});
  if (!input_readers.empty())
    step_inputs_.Open({id, t.step_id}, input_readers, input->rows, input->cols);
  nlohmann::json answer = {{"job_id", id},
                           {"step_id", t.step_id},
                           {"nodes", t.step_nodes},
                           {"tasks_per_node", t.step_tasks_per_node},
                           {"ntasks", t.step_tasks},
                           {"input", !input_readers.empty()}};
  steps_[{id, t.step_id}] = std::move(step);
  // The step counter is durable with the job's next record; a step id is never reused within a
  // run because the counter only grows in memory.
  PersistLocked({&job});
  return answer;
}

Result<nlohmann::json> Controller::ShowStep(JobId id, std::int32_t step) const {
  HeldLock lock(*this);
  auto it = steps_.find({id, step});
  if (it == steps_.end())
    return NotFound("no step " + std::to_string(id) + "." + std::to_string(step));
  const StepInfo& s = *it->second;
  return nlohmann::json{{"job_id", id},
                        {"step_id", step},
                        {"state", s.state},
                        {"exit_code", s.exit_code},
                        {"signal", s.signal},
                        {"ntasks", s.ntasks},
                        // Its tasks read srun's input: sattach may append to it.
                        {"input", step_inputs_.IsOpen({id, step})}};
}

}  // namespace lockstep::controller

namespace lockstep::controller {

void Controller::StepOutput(const Caller& caller, JobId id, std::int32_t step,
                            std::uint64_t offset, std::chrono::milliseconds wait,
                            StepOutputDone done, bool attach, std::uint64_t notice) {
  Result<nlohmann::json> now = nlohmann::json();
  {
    std::lock_guard<std::mutex> lock(mu_);
    const StepOutputs::Key key{id, step};
    Result<JobEntry*> job = FindLocked(id);
    if (!job.ok()) {
      now = job.status();
    } else if (Status owner = CheckOwner(caller, **job); !owner.ok()) {
      now = owner;
    } else if (!steps_.count(key)) {
      now = NotFound("no step " + std::to_string(id) + "." + std::to_string(step));
    } else if (wait.count() <= 0 || StepOutputReadyLocked(key, offset, notice)) {
      now = ReadStepOutputLocked(key, offset, attach, notice);
    } else {
      step_waiters_[key].push_back(
          {offset, std::chrono::steady_clock::now() + wait, std::move(done), attach, notice});
      step_output_changed_.notify_all();  // its deadline may be the timer's next
      return;
    }
  }
  done(std::move(now));
}

bool Controller::StepOutputReadyLocked(StepOutputs::Key key, std::uint64_t offset,
                                       std::uint64_t notice) {
  auto step = steps_.find(key);
  const StepOutputBuffer* b = step_outputs_.Find(key);
  return stopping_ || step == steps_.end() || step->second->state != "RUNNING" ||
         (b && (b->end() > offset || b->notice_end() > notice));
}

nlohmann::json Controller::ReadStepOutputLocked(StepOutputs::Key key, std::uint64_t offset,
                                                bool attach, std::uint64_t notice) {
  auto step = steps_.find(key);
  const bool ended = step == steps_.end() || step->second->state != "RUNNING";
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
  // scontrol notify's messages since `notice`, and the number to ask from next.
  nlohmann::json notices = buffer ? nlohmann::json(buffer->NoticesFrom(notice))
                                  : nlohmann::json::array();
  const std::uint64_t notice_next = buffer ? buffer->notice_end() : notice;
  // srun has read everything: the buffer goes (a later read answers done with nothing).
  if (done && buffer && !attach) step_outputs_.Free(key);
  return nlohmann::json{{"job_id", key.first},   {"step_id", key.second},
                        {"offset", r.next},       {"dropped", r.dropped},
                        {"done", done},           {"chunks", std::move(chunks)},
                        {"notices", std::move(notices)}, {"notice", notice_next}};
}

void Controller::StepWaitLoop() {
  using SteadyClock = std::chrono::steady_clock;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    const SteadyClock::time_point now = SteadyClock::now();
    SteadyClock::time_point next = SteadyClock::time_point::max();
    std::vector<std::pair<StepOutputDone, nlohmann::json>> answers;
    for (auto it = step_waiters_.begin(); it != step_waiters_.end();) {
      std::vector<StepWaiter>& waiters = it->second;
      for (std::size_t i = 0; i < waiters.size();) {
        StepWaiter& w = waiters[i];
        if (w.deadline <= now || StepOutputReadyLocked(it->first, w.offset, w.notice)) {
          answers.emplace_back(std::move(w.done),
                               ReadStepOutputLocked(it->first, w.offset, w.attach, w.notice));
          waiters.erase(waiters.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
          next = std::min(next, w.deadline);
          ++i;
        }
      }
      it = waiters.empty() ? step_waiters_.erase(it) : std::next(it);
    }
    if (!answers.empty()) {
      lock.unlock();
      for (auto& [done, answer] : answers) done(std::move(answer));
      answers.clear();  // the Responders they hold go before the lock is taken again
      lock.lock();
      continue;  // more may have come meanwhile
    }
    if (stopping_) return;  // every waiter was answered above
    if (next == SteadyClock::time_point::max())
      step_output_changed_.wait(lock);
    else
      step_output_changed_.wait_until(lock, next);
  }
}

Status Controller::SignalStep(const Caller& caller, JobId id, std::int32_t step, int signal) {
  HeldLock lock(*this);
  Result<JobEntry*> job = FindLocked(id);
  if (!job.ok()) return job.status();
  LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, **job));
  auto it = steps_.find({id, step});
  if (it == steps_.end())
    return NotFound("no step " + std::to_string(id) + "." + std::to_string(step));
  if (it->second->state != "RUNNING") return Status::Ok();
  SendLocked({Command::SignalStep{id, step, signal, options_.kill_wait}});
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
