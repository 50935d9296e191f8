// The stdin of a step's task: srun's input, relayed by lockstepd and written by the unit's
// InputFeeder into a pipe, or into a pseudo-terminal for `srun --pty`.
#include <fcntl.h>
#include <pty.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "backend/agent/agent.h"

namespace lockstep::agent {

Result<TaskInput> MakeTaskInput(const nlohmann::json& launch, const nlohmann::json& task,
                                bool stream) {
  TaskInput in;
  if (task.value("stdin", "") != "forward") return in;
  if (launch.value("pty", false) && stream) {
    winsize ws{};
    ws.ws_row = static_cast<unsigned short>(launch.value("rows", 0));
    ws.ws_col = static_cast<unsigned short>(launch.value("cols", 0));
    int master = -1, slave = -1;
    if (::openpty(&master, &slave, nullptr, nullptr, ws.ws_row > 0 ? &ws : nullptr) != 0)
      return Internal(std::string("cannot open a pseudo-terminal: ") + std::strerror(errno));
    ::fcntl(master, F_SETFD, FD_CLOEXEC);
    ::fcntl(slave, F_SETFD, FD_CLOEXEC);
    in.task_end = UniqueFd(slave);
    in.pty_output = UniqueFd(master);
    in.feed_end = UniqueFd(::fcntl(master, F_DUPFD_CLOEXEC, 3));
    if (in.feed_end.get() < 0)
      return Internal(std::string("cannot duplicate a pseudo-terminal: ") + std::strerror(errno));
    return in;
  }
  int fds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return Internal(std::string("cannot create a pipe: ") + std::strerror(errno));
  in.task_end = UniqueFd(fds[0]);
  in.feed_end = UniqueFd(fds[1]);
  return in;
}

}  // namespace lockstep::agent
