#include "backend/kubernetes/backend/exec_steps.h"

#include <signal.h>

#include <algorithm>
#include <condition_variable>

#include "common/log.h"

namespace lockstep::kube {
namespace {

constexpr std::chrono::milliseconds kOpenTimeout{15'000};
// How long one read of srun's input waits; the pump asks again at once after it.
constexpr std::chrono::milliseconds kInputPoll{10'000};

// Reads "<n>\n" then n bytes (one at a time: `read` and `dd bs=1` never take more than theirs
// from a pipe), until "0\n" or the end; the command reads it all as its stdin.
constexpr const char* kFramedStdinScript =
    "while read -r n && [ \"$n\" -gt 0 ]; do dd bs=1 count=\"$n\" 2>/dev/null; done | \"$@\"";

// Every task runs under this wrapper: it writes its PID to a file in the pod ($0), then becomes
// the command. The exec stream carries no signals and closing it does not end the command, so a
// signal reaches the task by a second exec running kKillScript over that file.
constexpr const char* kPidFileScript = "{ echo $$ > \"$0\"; } 2>/dev/null; exec \"$@\"";
// Signal $1 to the task whose PID file is $0: its process group when it leads one (a task on a
// terminal does), else the process. Exit 3: no such file (the task never started).
constexpr const char* kKillScript =
    "p=$(cat \"$0\" 2>/dev/null) || exit 3; kill -\"$1\" -\"$p\" 2>/dev/null || kill -\"$1\" \"$p\"";

}  // namespace

std::vector<std::string> PidFileArgv(const std::string& pid_file,
                                     const std::vector<std::string>& argv) {
  std::vector<std::string> out = {"sh", "-c", kPidFileScript, pid_file};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::vector<std::string> KillArgv(const std::string& pid_file, int signo) {
  return {"sh", "-c", kKillScript, pid_file, std::to_string(signo)};
}

std::string TaskPidFile(JobId job, std::int32_t step, std::int32_t rank) {
  return "/tmp/.lockstep-step-" + std::to_string(job) + "." + std::to_string(step) + "." +
         std::to_string(rank) + ".pid";
}

std::vector<std::string> FramedStdinArgv(const std::vector<std::string>& argv) {
  std::vector<std::string> out = {"sh", "-c", kFramedStdinScript, "lockstep-stdin"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::string FrameStdinChunk(std::string_view data) {
  return std::to_string(data.size()) + "\n" + std::string(data);
}

struct ExecSteps::Task {
  Target target;
  bool tty = false;
  bool framed = false;  // stdin framed for FramedStdinArgv
  std::mutex mu;
  std::unique_ptr<ExecStream> stream;  // guarded by mu: set once open, until the task ends
  bool ended = false;                  // guarded by mu
  bool closed = false;                 // guarded by mu: Signal closed it
};

struct ExecSteps::Step {
  JobId job = 0;
  std::int32_t step = 0;
  bool pty = false;
  int rows = 0, cols = 0;
  backend::StepInputSource* input = nullptr;
  std::vector<std::shared_ptr<Task>> tasks;
  std::mutex mu;
  std::condition_variable settled;                   // a task's exec opened, or it ended
  std::map<std::string, int> running;                // guarded by mu: tasks per node
  std::map<std::string, backend::ExitStatus> worst;  // guarded by mu: per node
};

// A thread and whether it has finished, so that Launch joins the finished ones.
struct ExecSteps::Worker {
  std::thread thread;
  std::shared_ptr<std::atomic<bool>> done;
};

ExecSteps::ExecSteps(KubeConfig config, backend::EventSink& events)
    : config_(std::move(config)), events_(events) {}

ExecSteps::~ExecSteps() {
  Stop();
}

void ExecSteps::Launch(const backend::StepLaunch& launch, std::vector<Target> targets) {
  auto step = std::make_shared<Step>();
  step->job = launch.job;
  step->step = launch.step;
  step->pty = launch.pty;
  step->rows = launch.rows;
  step->cols = launch.cols;
  step->input = launch.input;
  std::vector<std::string> pumps;  // nodes with a task that reads srun's input
  for (Target& t : targets) {
    auto task = std::make_shared<Task>();
    task->tty = launch.pty && t.task.rank == 0;
    task->framed = t.task.stdin_forwarded && !task->tty;
    if (t.task.stdin_forwarded && std::find(pumps.begin(), pumps.end(), t.node) == pumps.end())
      pumps.push_back(t.node);
    ++step->running[t.node];
    task->target = std::move(t);
    step->tasks.push_back(std::move(task));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  steps_[{launch.job, launch.step}] = step;
  for (const std::shared_ptr<Task>& task : step->tasks)
    StartLocked([this, step, task] { RunTask(step, task); });
  if (step->input != nullptr)
    for (const std::string& node : pumps)
      StartLocked([this, step, node] { PumpInput(step, node); });
  // Threads of ended steps: joined now (they have returned or are returning).
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
}

void ExecSteps::StartLocked(std::function<void()> body) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  workers_.push_back({std::thread([body = std::move(body), done] {
                        body();
                        done->store(true);
                      }),
                      done});
}

void ExecSteps::RunTask(std::shared_ptr<Step> step, std::shared_ptr<Task> task) {
  const Target& t = task->target;
  const bool reads = t.task.stdin_forwarded;
  const JobId job = step->job;
  const std::int32_t id = step->step;
  const std::int32_t rank = t.task.rank;
  const std::vector<std::string> wrapped = PidFileArgv(TaskPidFile(job, id, rank), t.task.argv);
  const std::vector<std::string> argv = task->framed ? FramedStdinArgv(wrapped) : wrapped;
  auto output = [this, job, id, rank](ExecChannel channel, std::string data) {
    events_.StepOutput(
        {backend::OutputChunk{job, id, rank, channel == ExecChannel::kStderr, std::move(data)}});
  };
  Result<std::unique_ptr<ExecStream>> opened =
      ExecStream::Open(config_, ExecTarget(t.ns, t.pod, kJobContainer, argv, reads, task->tty),
                       kOpenTimeout, output);
  if (!opened.ok()) {
    output(ExecChannel::kStderr, "lockstep: step " + std::to_string(job) + "." +
                                     std::to_string(id) + ": cannot run in pod " + t.pod + ": " +
                                     opened.status().message() + "\n");
    return TaskEnded(*step, *task, backend::ExitStatus{1, 0, false});
  }
  ExecStream* stream = opened->get();
  {
    std::lock_guard<std::mutex> lock(task->mu);
    task->stream = std::move(*opened);
    if (task->closed) stream->Close();  // signalled while it was opening
  }
  {
    std::lock_guard<std::mutex> lock(step->mu);  // the pump waits for it under this lock
  }
  step->settled.notify_all();
  if (task->tty && step->rows > 0) stream->Resize(step->rows, step->cols);
  Result<int> code = stream->Run();
  backend::ExitStatus status{0, 0, false};
  if (code.ok()) {
    status.exit_code = *code;
  } else {
    bool closed = false;
    {
      std::lock_guard<std::mutex> lock(task->mu);
      closed = task->closed;
    }
    if (closed) {
      status.signal = SIGKILL;
    } else {
      status.exit_code = 1;
      output(ExecChannel::kStderr, "lockstep: step " + std::to_string(job) + "." +
                                       std::to_string(id) + " in pod " + t.pod + ": " +
                                       code.status().message() + "\n");
    }
  }
  TaskEnded(*step, *task, status);
}

void ExecSteps::TaskEnded(Step& step, Task& task, backend::ExitStatus status) {
  {
    std::lock_guard<std::mutex> lock(task.mu);
    task.ended = true;
  }
  const std::string& node = task.target.node;
  backend::ExitStatus worst;
  bool node_done = false;
  {
    std::lock_guard<std::mutex> lock(step.mu);
    backend::ExitStatus& w = step.worst[node];
    w.exit_code = std::max(w.exit_code, status.exit_code);
    if (w.signal == 0) w.signal = status.signal;
    node_done = --step.running[node] == 0;
    worst = w;
  }
  step.settled.notify_all();
  if (node_done) events_.StepNodeExited(step.job, step.step, node, worst);
  bool all_done = true;
  {
    std::lock_guard<std::mutex> lock(step.mu);
    for (const auto& [n, running] : step.running) all_done = all_done && running == 0;
  }
  if (all_done) {
    std::lock_guard<std::mutex> lock(mu_);
    steps_.erase({step.job, step.step});
  }
}

// srun's input for the tasks of `node` that read it: the controller's relay, read as that node,
// written to each such task's exec (framed when it has no terminal), and the terminal's size.
void ExecSteps::PumpInput(std::shared_ptr<Step> step, std::string node) {
  std::uint64_t offset = 0, winsize_seen = 0;
  auto readers = [&] {
    std::vector<std::shared_ptr<Task>> out;
    for (const std::shared_ptr<Task>& t : step->tasks)
      if (t->target.node == node && t->target.task.stdin_forwarded) out.push_back(t);
    return out;
  }();
  // Bytes go to every reading task: wait until each has its exec open (or has ended).
  auto settled = [&] {
    for (const std::shared_ptr<Task>& t : readers) {
      std::lock_guard<std::mutex> lock(t->mu);
      if (t->stream == nullptr && !t->ended) return false;
    }
    return true;
  };
  {
    std::unique_lock<std::mutex> lock(step->mu);
    step->settled.wait(lock, settled);
  }
  for (;;) {
    Result<backend::StepInputRead> r =
        step->input->ReadStepInput(step->job, step->step, node, offset, winsize_seen, kInputPoll);
    if (!r.ok()) {
      log::Warning("step {}.{}: srun's input: {}", step->job, step->step, r.status().message());
      return;
    }
    log::Debug("step {}.{}: input for {}: {} bytes{}{}", step->job, step->step, node,
               r->data.size(), r->eof ? ", its end" : "", r->closed ? ", closed" : "");
    bool all_ended = true;
    for (const std::shared_ptr<Task>& t : readers) {
      std::lock_guard<std::mutex> lock(t->mu);
      all_ended = all_ended && t->ended;
      if (t->ended) continue;
      if (r->winsize != winsize_seen && t->tty && r->rows > 0) t->stream->Resize(r->rows, r->cols);
      if (!r->data.empty()) t->stream->SendStdin(t->framed ? FrameStdinChunk(r->data) : r->data);
      if (r->eof && t->framed) t->stream->SendStdin(FrameStdinChunk(""));
    }
    if (r->closed || r->eof || all_ended) return;
    offset = r->next_offset;
    winsize_seen = r->winsize;
  }
}

Status ExecSteps::Signal(JobId job, std::int32_t id, int signo) {
  std::shared_ptr<Step> step;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = steps_.find({job, id});
  if (it == steps_.end()) return Status::Ok();  // ended already
  step = it->second;
  // The end of the step (SIGTERM, SIGKILL, or 0 when the step is over): its commands are killed
  // in the pods, and the execs closed so that srun's step ends even if a kill cannot run.
  const bool end = signo == 0 || signo == SIGTERM || signo == SIGKILL;
  // Which tasks get the signal is decided before any exec is closed: closing one ends its task
  // here at once (its reader sees the stream go), while its command still runs in the pod.
  std::vector<std::shared_ptr<Task>> running;
  for (const std::shared_ptr<Task>& t : step->tasks) {
    std::lock_guard<std::mutex> task_lock(t->mu);
    if (!t->ended) running.push_back(t);  // an ended task's PID may be another process's now
    if (!end) continue;
    t->closed = true;
    if (t->stream && !t->ended) t->stream->Close();
  }
  // The kills run on threads of their own: each is an exec round trip (tens of ms) and the
  // caller may hold the controller's lock.
  const int sent = signo == 0 ? SIGKILL : signo;
  if (!stopping_)
    for (const std::shared_ptr<Task>& t : running)
      StartLocked([this, step, t, sent] { KillTask(*step, *t, sent); });
  return Status::Ok();
}

void ExecSteps::KillTask(const Step& step, const Task& task, int signo) {
  const Target& t = task.target;
  std::string said;
  auto output = [&said](ExecChannel, std::string data) { said += data; };
  Result<std::unique_ptr<ExecStream>> opened = ExecStream::Open(
      config_,
      ExecTarget(t.ns, t.pod, kJobContainer,
                 KillArgv(TaskPidFile(step.job, step.step, t.task.rank), signo), false, false),
      kOpenTimeout, output);
  Result<int> code = opened.ok() ? (*opened)->Run() : Result<int>(opened.status());
  if (!code.ok() || *code != 0)
    log::Warning("step {}.{} task {} in pod {}: signal {} not delivered: {}", step.job, step.step,
                 t.task.rank, t.pod, signo,
                 !code.ok() ? code.status().message()
                            : "kill exited " + std::to_string(*code) + (said.empty() ? "" : ": " + said));
}

void ExecSteps::Stop() {
  std::vector<Worker> workers;
  std::map<Key, std::shared_ptr<Step>> steps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    steps = steps_;
    workers.swap(workers_);
  }
  for (const auto& [key, step] : steps) (void)Signal(key.first, key.second, SIGKILL);
  for (Worker& w : workers) w.thread.join();
}

}  // namespace lockstep::kube
