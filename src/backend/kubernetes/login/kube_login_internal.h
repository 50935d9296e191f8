// Internal to KubeLogins (kube_logins.h): the state shared by its pod and session halves.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "backend/kubernetes/client/exec_stream.h"
#include "backend/kubernetes/login/kube_logins.h"
#include "backend/kubernetes/objects/pod_builder.h"

namespace lockstep::kube {

struct KubeLogins::UserState {
  std::mutex ensure_mu;  // one making or deleting of the user's pod at a time
  int open = 0;          // sessions (guarded by KubeLogins::mu_)
  Time idle_since = 0;   // when the last session ended (guarded by KubeLogins::mu_)
};

struct KubeLogins::Session {
  std::string id, user, pod;
  std::string key;  // whose pod: the user's name, or the pool's state key
  std::uint32_t uid = 0;
  bool tty = false;
  bool framed = false;  // stdin is framed (exec_steps.h: FramedStdinArgv)
  std::unique_ptr<ExecStream> stream;
  std::thread reader;

  std::mutex mu;
  std::condition_variable drained;                 // room in the output, or closed
  std::deque<std::pair<int, std::string>> chunks;  // fd, bytes; from offset `base`
  std::uint64_t base = 0, end = 0;
  std::size_t held = 0;
  std::uint64_t input_next = 0;
  bool input_eof = false;
  bool ended = false;
  int exit_code = 0;
  std::string error;   // the exec broke: why
  bool closed = false;  // Close()d or Stop()ped
  bool finished = false;  // the end was read: forgotten
  std::function<void(Result<nlohmann::json>)> waiter;
  std::uint64_t waiter_offset = 0;
  std::chrono::steady_clock::time_point waiter_deadline;
  std::chrono::steady_clock::time_point last_poll;
};

// Bytes of output a session holds before its command waits for the CLI to read.
inline constexpr std::size_t kLoginOutputCapacity = 1 << 20;
inline constexpr char kLoginContainer[] = "login";

// The declared file systems (or the login spec's share of them) as pod mounts; `home_mounted`:
// the user's home lies on one of them (and login.home).
std::vector<HostMount> LoginMounts(const config::LoginConfig& login,
                                   const std::vector<config::FileSystem>& storage,
                                   const identity::UserRecord& user, bool& home_mounted);

// Supplementary gids as `lockstep login-as` takes them: "3000,3001", or "-" for none.
inline std::string GidList(const std::vector<std::uint32_t>& groups) {
  std::string out;
  for (std::uint32_t g : groups) out += (out.empty() ? "" : ",") + std::to_string(g);
  return out.empty() ? "-" : out;
}

// Running, its container ready.
bool PodRunning(const nlohmann::json& pod);

// How users reach a node: its external address, else its internal one, else its name.
std::string NodeAddress(const nlohmann::json& node);

inline Status Unavailable(std::string message) {
  return Status(StatusCode::kUnavailable, std::move(message));
}

}  // namespace lockstep::kube
