// Job steps on Kubernetes (srun --jobid=ID --overlap [--pty] CMD): each task is the command run
// in the job's pod on its node through the pod's `exec` (client/exec_stream.h). Its stdout and
// stderr go to the controller as the step's output (EventSink::StepOutput), srun's input and
// terminal size come from the controller's relay (backend::StepInputSource) into the exec's
// stdin and resize channels, and when every task of a node has ended its worst exit code is the
// node's (EventSink::StepNodeExited). With --pty the exec has a terminal: Ctrl-C and Ctrl-D
// are the terminal's bytes, as on a login.
//
// The exec subresource (v4.channel.k8s.io) cannot close a command's stdin alone, so without a
// terminal a task that reads its input runs under `sh -c` reading it as length-prefixed chunks
// ("<bytes>\n" then that many bytes; "0\n" is the end), which needs dd in the image. Nor does it
// carry signals: every task runs under `sh -c` writing its PID to /tmp in the pod, and a signal
// is a second exec running `kill` (so the image needs sh, and a writable /tmp for signals).
//
// Threads: one per task (the exec's reader) and one per node whose tasks read srun's input (the
// pump). Thread-safe; Stop() closes every exec and joins. The config, the sink and the input
// sources must outlive it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backend/kubernetes/client/exec_stream.h"
#include "backend/kubernetes/client/kubeconfig.h"

namespace lockstep::kube {

// The container of a job's pod that runs its tasks (pod_builder's).
inline constexpr const char* kJobContainer = "job";

// The argv that feeds a non-terminal task its input in length-prefixed chunks (see above), and
// the encoding of those chunks; pure, for tests.
std::vector<std::string> FramedStdinArgv(const std::vector<std::string>& argv);
std::string FrameStdinChunk(std::string_view data);  // "" ends the input: "0\n"
// The argv that runs a task after writing its PID to `pid_file` in the pod, the argv that sends
// it `signo` from there (its process group when it leads one), and the file of a task.
std::vector<std::string> PidFileArgv(const std::string& pid_file,
                                     const std::vector<std::string>& argv);
std::vector<std::string> KillArgv(const std::string& pid_file, int signo);
std::string TaskPidFile(JobId job, std::int32_t step, std::int32_t rank);

class ExecSteps {
 public:
  // Where one task runs: the pod (namespace, name) on its node.
  struct Target {
    std::string ns, pod, node;
    backend::StepTask task;
  };

  ExecSteps(KubeConfig config, backend::EventSink& events);
  ~ExecSteps();  // Stop()s
  ExecSteps(const ExecSteps&) = delete;
  ExecSteps& operator=(const ExecSteps&) = delete;

  // Starts the step's tasks (one exec each); their ends are reported per node.
  void Launch(const backend::StepLaunch& step, std::vector<Target> targets);
  // Sends `signo` to every task of the step, in its pod, by a second exec (`kill`, see
  // PidFileArgv): asynchronous, as Slurm's. SIGTERM, SIGKILL and 0 (the end of the step) also
  // close the execs, which ends the step at once (the kubelet ends no command whose exec
  // closed: the kill does).
  Status Signal(JobId job, std::int32_t step, int signo);
  void Stop();

 private:
  struct Task;
  struct Step;
  struct Worker;
  using Key = std::pair<JobId, std::int32_t>;

  // With mu_ held: runs `body` on a thread of its own, joined by a later Launch or Stop.
  void StartLocked(std::function<void()> body);
  void RunTask(std::shared_ptr<Step> step, std::shared_ptr<Task> task);
  void PumpInput(std::shared_ptr<Step> step, std::string node);
  void TaskEnded(Step& step, Task& task, backend::ExitStatus status);
  void KillTask(const Step& step, const Task& task, int signo);  // one exec of KillArgv

  const KubeConfig config_;
  backend::EventSink& events_;
  std::mutex mu_;
  bool stopping_ = false;                       // guarded by mu_
  std::map<Key, std::shared_ptr<Step>> steps_;  // guarded by mu_: running steps
  std::vector<Worker> workers_;                 // guarded by mu_
};

}  // namespace lockstep::kube
