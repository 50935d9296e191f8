// The framing of a pod's `exec` over a WebSocket, subprotocol `v4.channel.k8s.io` (Kubernetes'
// apimachinery/pkg/util/remotecommand and wsstream): every binary message is one channel byte,
// then that channel's bytes. 0 stdin (to the pod), 1 stdout, 2 stderr, 3 the error channel (one
// metav1.Status when the command ends: Success, or NonZeroExitCode with an ExitCode cause), 4
// the terminal's size (JSON {"Width", "Height"}, to the pod). Pure functions; the connection is
// exec_stream.h's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace lockstep::kube {

inline constexpr const char* kExecSubprotocol = "v4.channel.k8s.io";

enum class ExecChannel : std::uint8_t {
  kStdin = 0,
  kStdout = 1,
  kStderr = 2,
  kError = 3,
  kResize = 4,
};

struct ExecFrame {
  ExecChannel channel = ExecChannel::kStdout;
  std::string data;
};

// One message: the channel's byte, then `data`.
std::string EncodeExecFrame(ExecChannel channel, std::string_view data);
// A message from the server; an empty one or an unknown channel is an error naming it.
Result<ExecFrame> DecodeExecFrame(std::string_view message);
// The resize channel's message body: {"Width":cols,"Height":rows}.
std::string EncodeTerminalSize(int rows, int cols);

// What the error channel's metav1.Status says: the command's exit code (Success: 0;
// NonZeroExitCode: its ExitCode cause), or an error with the Status's message (the command
// could not run: not found, the container gone, ...).
Result<int> ExitCodeOfExecStatus(std::string_view status_json);

// The exec subresource's path and query: `argv` as repeated `command`, stdout always, stderr
// unless `tty` (a terminal merges it), `stdin` and `tty` as asked.
std::string ExecTarget(const std::string& ns, const std::string& pod, const std::string& container,
                       const std::vector<std::string>& argv, bool stdin, bool tty);

}  // namespace lockstep::kube
