#include "backend/agent/launcher_test_util.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace lockstep::agent::testing {
namespace {

std::vector<std::string> OwnArgs() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

[[noreturn]] void AllocMb(long mb) {
  constexpr std::size_t kChunk = 1 << 20;
  for (long i = 0; i < mb; ++i) {
    char* p = static_cast<char*>(std::malloc(kChunk));
    if (p == nullptr) _exit(2);
    std::memset(p, 1, kChunk);  // touch every page, so it is charged to the cgroup
  }
  std::printf("allocated %ld MiB\n", mb);
  std::fflush(stdout);
  _exit(0);
}

[[noreturn]] void EscapeSession(const std::string& pidfile) {
  int ready[2];
  if (pipe(ready) != 0) _exit(2);
  const pid_t child = fork();
  if (child < 0) _exit(2);
  if (child == 0) {
    setsid();
    const std::string tmp = pidfile + ".tmp";
    {
      std::ofstream out(tmp);
      out << getpid() << "\n";
    }
    std::rename(tmp.c_str(), pidfile.c_str());
    [[maybe_unused]] ssize_t n = write(ready[1], "x", 1);
    for (int i = 0; i < 300; ++i) sleep(1);
    _exit(0);
  }
  char c;
  [[maybe_unused]] ssize_t n = read(ready[0], &c, 1);
  _exit(0);
}

// Runs before main: the helper modes never reach GoogleTest.
[[maybe_unused]] const bool kHelperModes = [] {
  const std::vector<std::string> args = OwnArgs();
  if (args.size() >= 3 && args[1] == "--alloc-mb") AllocMb(std::atol(args[2].c_str()));
  if (args.size() >= 3 && args[1] == "--escape-session") EscapeSession(args[2]);
  return true;
}();

}  // namespace

TempDir::TempDir() {
  char tmpl[] = "/tmp/lockstep_launcher_test.XXXXXX";
  const char* made = mkdtemp(tmpl);
  if (made == nullptr) std::abort();
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Launcher& SharedLauncher() {
  static Launcher* launcher = [] {
    auto created = Launcher::Create({});
    if (!created.ok()) {
      std::fprintf(stderr, "cannot create the launcher: %s\n", created.status().ToString().c_str());
      std::abort();
    }
    return created->release();
  }();
  return *launcher;
}

TaskSpec BaseSpec(const TempDir& dir, std::vector<std::string> argv) {
  TaskSpec spec;
  spec.argv = std::move(argv);
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.cwd = dir.path();
  spec.uid = geteuid();
  spec.gid = getegid();
  spec.stdout_path = dir.File("out");
  return spec;
}

std::string SelfExe() {
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

pid_t ReadPidFile(const std::string& path, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const long pid = std::atol(ReadFile(path).c_str());
    if (pid > 0) return static_cast<pid_t>(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}

bool WaitForText(const std::string& path, const std::string& needle,
                 std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ReadFile(path).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

bool WaitGone(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
    const std::size_t paren = stat.rfind(')');
    if (stat.empty() ||
        (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z')) {
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string UniqueCgroupName(const std::string& leaf) {
  static std::atomic<int> next{0};
  return "lockstep_test_" + std::to_string(getpid()) + "_" + std::to_string(next++) + "/" + leaf;
}

}  // namespace lockstep::agent::testing
