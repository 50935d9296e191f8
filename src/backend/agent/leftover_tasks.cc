#include "backend/agent/leftover_tasks.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backend/agent/cgroup.h"

namespace lockstep::agent {
namespace {

struct Record {
  pid_t pid = 0;
  std::uint64_t start_time = 0;
  std::string cgroup;
};

bool ReadRecord(const std::string& path, Record& r) {
  std::ifstream in(path);
  return static_cast<bool>(in >> r.pid >> r.start_time) && r.pid > 1 &&
         (std::getline(in >> std::ws, r.cgroup), true);
}

// Kills every process of a cgroup the previous agent made (cgroup.kill where the kernel has it,
// else each listed process), then removes it if it is empty by then.
void KillCgroup(const std::string& path) {
  if (path.empty() || !std::filesystem::is_directory(path)) return;
  if (internal::WriteSmallFile(path + "/cgroup.kill", "1") != 0) {
    Result<std::string> procs = internal::ReadSmallFile(path + "/cgroup.procs");
    if (procs.ok())
      for (pid_t p : internal::ParsePids(*procs)) ::kill(p, SIGKILL);
  }
  ::rmdir(path.c_str());  // fails while the killed processes are being torn down: left then
}

// Ends a recorded task if it still runs; true when something was killed.
bool EndTask(const Record& r) {
  const std::uint64_t now = TaskRecords::StartTimeOf(r.pid);
  bool killed = false;
  if (now == r.start_time) {
    killed = ::kill(-r.pid, SIGKILL) == 0;  // the task's own process group (setsid)
    killed |= ::kill(r.pid, SIGKILL) == 0;
  } else if (now == 0) {
    // The leader is gone; a process group with its id can only be what is left of the task
    // (a pid is not given out again while it names a group).
    killed = ::kill(-r.pid, SIGKILL) == 0;
  }
  // A different process under the pid: the task and its group are long gone.
  KillCgroup(r.cgroup);
  return killed;
}

}  // namespace

Result<TaskRecords> TaskRecords::Open(const std::string& spool_dir) {
  const std::string dir = spool_dir + "/tasks";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError("cannot create " + dir + ": " + ec.message());
  return TaskRecords(dir);
}

Status TaskRecords::Add(pid_t pid, const std::string& cgroup_path) const {
  const std::string path = dir_ + "/" + std::to_string(pid);
  std::ofstream out(path, std::ios::trunc);
  out << pid << ' ' << StartTimeOf(pid) << ' ' << cgroup_path << '\n';
  out.close();
  if (!out) return IoError("cannot record task " + std::to_string(pid) + " in " + path);
  return Status::Ok();
}

void TaskRecords::Remove(pid_t pid) const {
  ::unlink((dir_ + "/" + std::to_string(pid)).c_str());
}

std::vector<std::string> TaskRecords::EndLeftovers() const {
  std::vector<std::string> lines;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    Record r;
    const std::string path = entry.path().string();
    if (ReadRecord(path, r) && EndTask(r)) {
      lines.push_back("ended task " + std::to_string(r.pid) +
                      " that an earlier lockstep-agent started and left running");
    }
    ::unlink(path.c_str());
  }
  return lines;
}

std::uint64_t TaskRecords::StartTimeOf(pid_t pid) {
  // Read without iostreams: a process that ends between open and read makes read() fail with
  // ESRCH, which libstdc++'s filebuf throws through istreambuf_iterator (it ended the agent
  // while a job array's short tasks ended by the hundred). An ended process has no start time.
  Result<std::string> read = internal::ReadSmallFile("/proc/" + std::to_string(pid) + "/stat");
  if (!read.ok()) return 0;
  const std::string& stat = *read;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses; fields follow the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  // After comm: state is field 3, so the start time (field 22) is the 20th from here.
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return 0;
  }
  return std::strtoull(field.c_str(), nullptr, 10);
}

}  // namespace lockstep::agent
