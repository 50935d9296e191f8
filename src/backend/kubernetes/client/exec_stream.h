// A pod's `exec` subresource as a WebSocket to the apiserver (which proxies it to the node's
// kubelet), subprotocol `v4.channel.k8s.io` (exec_frame.h): a command in a running container,
// its stdin fed from here, its stdout and stderr delivered as they come, its exit code at the
// end. TLS and the bearer token or client certificate of the kubeconfig, as the Transport's.
//
//   auto s = ExecStream::Open(client.config(), ExecTarget(ns, pod, "job", argv, true, true),
//                             timeout, [](ExecChannel ch, std::string bytes) { ... });
//   std::thread in([&] { s->SendStdin("ls\n"); s->Resize(24, 80); });
//   Result<int> exit_code = (*s)->Run();  // until the command ends or Close()
//
// Thread-safety: Run() on one thread (which also calls the output callback); SendStdin,
// Resize and Close from any thread, queued onto Run's. The v4 protocol has no way to close the
// command's stdin alone: a caller that must signal the end of input frames it itself.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "backend/kubernetes/client/exec_frame.h"
#include "backend/kubernetes/client/kubeconfig.h"
#include "common/status.h"

namespace lockstep::kube {

class ExecStream {
 public:
  using OutputFn = std::function<void(ExecChannel channel, std::string data)>;

  // Connects, handshakes TLS and the WebSocket (the apiserver's answer, e.g. 403 or 404, as an
  // error naming it) within `timeout`.
  static Result<std::unique_ptr<ExecStream>> Open(const KubeConfig& config,
                                                  const std::string& target,
                                                  std::chrono::milliseconds timeout,
                                                  OutputFn on_output);
  virtual ~ExecStream() = default;

  // Reads until the command ends: its exit code from the error channel's Status; an error when
  // the stream broke, was closed (Close), or the command could not run.
  virtual Result<int> Run() = 0;
  virtual void SendStdin(std::string data) = 0;
  virtual void Resize(int rows, int cols) = 0;
  // Ends Run() promptly (its result: an error saying so).
  virtual void Close() = 0;
};

}  // namespace lockstep::kube
