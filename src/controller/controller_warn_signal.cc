// sbatch/srun --signal=[B:]SIG@TIME: SIG goes to a running job TIME seconds before its time
// limit, to its batch shell's process group with B:, else to its running steps (Slurm's rule:
// without B: the batch step is not signalled). Checked with the time limits, on every pass
// of the scheduling loop (at least every periodic_pass, 2 s by default), so the warning comes
// at most that late.
#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/job_convert.h"
#include "engine/request.h"

namespace lockstep::controller {

void Controller::SendWarningSignalsLocked(Time now) {
  for (JobId id : active_) {
    JobEntry& e = jobs_.at(id);
    if (e.state != JobState::kRunning || e.spec->signal_number == 0 ||
        e.warned_run == e.restart_count)
      continue;
    engine::Job j = ToEngineJob(e, cluster_);
    const Seconds limit = engine::ShapeOf(j, cluster_.base.partitions[j.partition]).duration;
    if (limit >= kUnlimited ||
        now < e.start_time + limit + e.suspended_seconds - e.spec->signal_time)
      continue;
    e.warned_run = e.restart_count;
    const int signo = e.spec->signal_number;
    if (e.spec->signal_batch_only) {
      SendLocked({Command::Signal{{e.id, e.restart_count}, signo, /*batch_only=*/true}});
      continue;
    }
    for (auto& [key, step] : steps_)
      if (key.first == e.id && step->state == "RUNNING")
        SendLocked({Command::SignalStep{e.id, key.second, signo, 0}});
  }
}

}  // namespace lockstep::controller
