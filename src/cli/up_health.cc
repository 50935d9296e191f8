#include "cli/up_health.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace lockstep::cli {

namespace fs = std::filesystem;

Result<std::string> UpHealthYaml(const std::string& program, int interval_s) {
  if (program.empty() && interval_s <= 0) return std::string();
  std::string y = "health:\n";
  if (!program.empty()) {
    std::error_code ec;
    const std::string path = fs::absolute(program, ec).lexically_normal().string();
    if (ec || !fs::is_regular_file(path) || ::access(path.c_str(), X_OK) != 0)
      return InvalidArgument("--health-program: " + program + " is not an executable file");
    // A JSON string is a YAML string: any path is quoted safely.
    y += "  program: " + nlohmann::json(path).dump() + "\n";
  }
  if (interval_s > 0) y += "  interval: " + std::to_string(interval_s) + "\n";
  return y;
}

Result<std::string> UpJobHooksYaml(const std::string& prolog, const std::string& epilog) {
  std::string y;
  for (const auto& [key, program] : {std::pair{"prolog", prolog}, std::pair{"epilog", epilog}}) {
    if (program.empty()) continue;
    std::error_code ec;
    const std::string path = fs::absolute(program, ec).lexically_normal().string();
    if (ec || !fs::is_regular_file(path) || ::access(path.c_str(), X_OK) != 0)
      return InvalidArgument(std::string("--") + key + ": " + program +
                             " is not an executable file");
    y += std::string(key) + ": " + nlohmann::json(path).dump() + "\n";
  }
  return y;
}

Result<HostGpus> DetectHostGpus(const std::string& agent_path, const std::string& state_dir) {
  const std::string out = state_dir + "/nvml-gpus.json";
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* f = std::freopen(out.c_str(), "w", stdout);
    if (!f) ::_exit(126);
    ::execl(agent_path.c_str(), agent_path.c_str(), "--list-gpus", "--state-dir",
            state_dir.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0)
    return FailedPrecondition("cannot run " + agent_path + " --list-gpus");
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (!j.is_object() || !j.contains("gpus") || !j["gpus"].is_array() || j["gpus"].empty())
    return NotFound(
        "--nvml: NVML shows no GPU on this host (is the NVIDIA driver installed, and "
        "libnvidia-ml.so.1 on the library path?)");
  HostGpus gpus;
  gpus.count = static_cast<int>(j["gpus"].size());
  gpus.type = j["gpus"][0].value("type", "gpu");
  return gpus;
}

}  // namespace lockstep::cli
