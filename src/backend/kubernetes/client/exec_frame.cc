#include "backend/kubernetes/client/exec_frame.h"

#include <nlohmann/json.hpp>

#include "backend/kubernetes/client/kube_client.h"
#include "backend/kubernetes/client/transport.h"

namespace lockstep::kube {

std::string EncodeExecFrame(ExecChannel channel, std::string_view data) {
  std::string out;
  out.reserve(data.size() + 1);
  out.push_back(static_cast<char>(channel));
  out.append(data);
  return out;
}

Result<ExecFrame> DecodeExecFrame(std::string_view message) {
  if (message.empty()) return InvalidArgument("exec stream: an empty message (no channel byte)");
  const auto channel = static_cast<std::uint8_t>(message[0]);
  if (channel > static_cast<std::uint8_t>(ExecChannel::kResize))
    return InvalidArgument("exec stream: unknown channel " + std::to_string(channel));
  return ExecFrame{static_cast<ExecChannel>(channel), std::string(message.substr(1))};
}

std::string EncodeTerminalSize(int rows, int cols) {
  return nlohmann::json{{"Width", cols}, {"Height", rows}}.dump();
}

Result<int> ExitCodeOfExecStatus(std::string_view status_json) {
  const nlohmann::json s = nlohmann::json::parse(status_json, nullptr, /*allow_exceptions=*/false);
  if (!s.is_object())
    return InvalidArgument("exec stream: the status is not a JSON object: " +
                           std::string(status_json.substr(0, 200)));
  const std::string status = s.value("status", "");
  if (status == "Success") return 0;
  const std::string message = s.value("message", "");
  if (status != "Failure") return InvalidArgument("exec stream: status '" + status + "'");
  if (s.value("reason", "") == "NonZeroExitCode") {
    const nlohmann::json details = s.value("details", nlohmann::json::object());
    for (const nlohmann::json& cause : details.value("causes", nlohmann::json::array())) {
      if (!cause.is_object() || cause.value("reason", "") != "ExitCode") continue;
      const std::string code = cause.value("message", "");
      if (!code.empty() && code.size() <= 3 &&
          code.find_first_not_of("0123456789") == std::string::npos)
        return std::stoi(code);
    }
    return InvalidArgument("exec stream: NonZeroExitCode without an ExitCode cause: " + message);
  }
  return Status(StatusCode::kFailedPrecondition, message.empty() ? "exec failed" : message);
}

std::string ExecTarget(const std::string& ns, const std::string& pod, const std::string& container,
                       const std::vector<std::string>& argv, bool stdin, bool tty) {
  std::string t = PodPath(ns, pod) + "/exec?container=" + QueryEscape(container);
  for (const std::string& a : argv) t += "&command=" + QueryEscape(a);
  t += "&stdout=true";
  if (!tty) t += "&stderr=true";
  if (stdin) t += "&stdin=true";
  if (tty) t += "&tty=true";
  return t;
}

}  // namespace lockstep::kube
