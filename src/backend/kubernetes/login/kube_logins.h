// Login environments on Kubernetes (docs/login.md): for each user, a pod of their own
// (objects/login_pod.h), made on their first `lockstep login`, reused by the next, deleted after
// `idle_timeout` without a session, and at once when the user leaves the identity source.
// A session is a command in that pod through its exec subresource (the user's shell with a
// terminal, or `sh -c COMMAND` without one), relayed for the CLI through lockstepd's API: the
// CLI posts its input and long-polls the output, as srun does for steps (docs/api.md, "Login").
//
// Who may do what: a caller opens sessions for themself, an operator for anyone; a session is
// its opener's alone (another caller's id reads as unknown). Users never touch the apiserver:
// lockstepd creates the pod and the Secret with its own credentials.
//
// Threads: Open() blocks its caller until the pod runs (bounded); one thread per session reads
// its exec; one housekeeping thread reaps idle pods and answers long polls whose wait ended.
// Thread-safe. The client, the directory function and the token functions must outlive it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "backend/kubernetes/client/kube_client.h"
#include "common/caller.h"
#include "common/clock.h"
#include "common/status.h"
#include "config/login_config.h"
#include "config/storage_config.h"
#include "identity/user_directory.h"

namespace lockstep::kube {

struct KubeLoginsOptions {
  config::LoginConfig login;
  std::string ns = "lockstep";
  std::vector<config::FileSystem> storage;
  std::string default_image;  // login.image when it names none
  std::string server;         // LOCKSTEP_SERVER in the pods ("" : none)
  std::string ca_pem;         // the CA the pods verify lockstepd with ("" : the system's)
  Seconds token_lifespan = 7 * 24 * 3600;
  std::chrono::milliseconds start_timeout{120'000};  // for a pod to run
  // A session whose output nobody asked for this long is closed (its CLI went away).
  std::chrono::milliseconds abandoned_after{120'000};
  std::chrono::milliseconds poll_wait{20'000};  // the longest an output poll waits
  lockstep::Clock* clock = &SystemClock();
};

// lockstep tokens for login pods: issued by lockstepd's registry, revoked by id or by user.
struct LoginTokens {
  // A token of `user` for `lifespan` seconds: the token and its id.
  std::function<Result<std::pair<std::string, std::string>>(const identity::UserRecord& user,
                                                            Seconds lifespan)>
      issue;
  std::function<void(const std::string& token_id)> revoke;
};

class KubeLogins {
 public:
  using Directory = std::function<std::shared_ptr<const identity::UserDirectory>()>;
  KubeLogins(KubeClient* client, Directory directory, LoginTokens tokens, KubeLoginsOptions options);
  ~KubeLogins();  // Stop()s
  KubeLogins(const KubeLogins&) = delete;
  KubeLogins& operator=(const KubeLogins&) = delete;

  // Adopts the login pods that exist (their idle clocks from their annotation) and starts the
  // housekeeping thread.
  Status Start();
  // Closes every session (their commands end) and joins the threads; pods stay.
  void Stop();

  // POST /api/v1/login: {"user": NAME (operators), "pool": NAME, "command": [ARGS...], "tty": bool, "rows",
  // "cols", "stdin": bool}. Makes or reuses the user's pod, waits for it to run and starts the
  // session: {"session", "pod", "node", "created", "started_ms"}. With "ssh": true (login.ssh),
  // no session: where the pod's sshd answers, {"ssh": {"host", "port", "user"}, "pod", ...}.
  Result<nlohmann::json> Open(const Caller& caller, bool caller_is_operator,
                              const nlohmann::json& body);
  // POST /api/v1/login/sessions/ID/input: {"offset", "data" (base64), "eof", "rows", "cols"}.
  // Answers {"offset": the input taken up to, "closed": the command ended or was closed}.
  Result<nlohmann::json> Input(const Caller& caller, const std::string& session,
                               const nlohmann::json& body);
  // GET /api/v1/login/sessions/ID/output?offset=N: {"chunks": [{"fd": 1|2, "data"}], "next",
  // and "exit" once the command ended and everything before was read}. Answers through `done`
  // when there is output, the end, or the wait ran out; never blocks.
  void Output(const Caller& caller, const std::string& session, std::uint64_t offset,
              std::function<void(Result<nlohmann::json>)> done);
  // POST /api/v1/login/sessions/ID/close: ends the session's command.
  Status Close(const Caller& caller, const std::string& session);

  // The user left the identity source: sessions closed, pod and Secret deleted, token revoked.
  void RemoveUser(const std::string& user);
  // The user's entry changed (keys, groups, shell): their Secret, when there is one, gets the
  // new authorized_keys, passwd and group at once (files the pod sees within the kubelet's
  // sync; /etc/passwd and /etc/group themselves are the pod's from its start).
  void UserChanged(const identity::UserRecord& user);
  // The storage or login settings changed (the cluster YAML): later pods get them.
  void SetStorage(std::vector<config::FileSystem> storage);

  // Reaps idle pods now (tests, after advancing their clock).
  void ReapForTest();

 private:
  struct Session;
  struct UserState;

  // The pod `name` when it is there to be used (`ours` says it is the right one); nothing when
  // absent, after deleting one that ended, is going, or is not ours.
  Result<std::optional<nlohmann::json>> Reusable(
      const std::string& name, const std::function<bool(const nlohmann::json&)>& ours);
  Result<nlohmann::json> EnsurePod(const identity::UserRecord& user, bool& created);
  // Shared pools (kube_login_pools.cc): the pool's pod, and the user's token in it.
  Result<nlohmann::json> EnsurePoolPod(const config::LoginPool& pool, bool& created);
  Status EnsurePoolSecret(const config::LoginPool& pool);
  Status StorePoolToken(const config::LoginPool& pool, const nlohmann::json& pod,
                        const identity::UserRecord& user);
  void ForgetPoolTokens(const std::string& pool);
  // PermissionDenied unless `user` is in one of the pool's groups.
  Status CheckPoolMember(const config::LoginPool& pool, const identity::UserRecord& user);
  // Pods' state keys: a user's name, or kPoolKeyPrefix + the pool's.
  static constexpr std::string_view kPoolKeyPrefix = "pool:";
  static bool IsPoolKey(const std::string& key) { return key.rfind(kPoolKeyPrefix, 0) == 0; }
  static std::string StateKeyOf(const nlohmann::json& pod);
  static std::string PodNameOf(const std::string& key);
  Status EnsureSecret(const identity::UserRecord& user);
  Result<std::int32_t> EnsureService(const identity::UserRecord& user);  // its node port
  // {"ssh": {"host", "port", "user"}}: where the user's sshd answers (login.ssh).
  Result<nlohmann::json> SshAddress(const identity::UserRecord& user, const nlohmann::json& pod);
  Result<std::string> PickNode();
  Result<nlohmann::json> WaitRunning(const std::string& pod);
  // `wrapper`: the argv the session's command runs under (a pool's `lockstep login-as ...`);
  // `key`: whose pod it is (StateKeyOf).
  Result<std::shared_ptr<Session>> StartSession(const identity::UserRecord& user,
                                                const std::string& pod, const std::string& key,
                                                const std::vector<std::string>& wrapper,
                                                const nlohmann::json& body);
  void ReadSession(std::shared_ptr<Session> s);
  void SessionEnded(const Session& s);
  std::shared_ptr<Session> FindSession(const Caller& caller, const std::string& id);
  // The answer to the session's pending output poll when it is due (output after its offset,
  // the end, or `timed_out`), the waiter taken; else nothing. s.mu held; call it after.
  static std::function<void()> TakeAnswer(Session& s, bool timed_out);
  void Housekeeping();
  void ReapIdle();
  void DeletePodAndSecret(const std::string& key, const std::string& why);
  std::string UserDatabase(bool groups) const;  // /etc/passwd or /etc/group text

  KubeClient* const client_;
  const Directory directory_;
  const LoginTokens tokens_;
  KubeLoginsOptions options_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, std::shared_ptr<Session>> sessions_;  // by id
  std::map<std::string, std::shared_ptr<UserState>> users_;    // by state key
  struct PoolToken {
    std::string pod_uid;  // the pool pod it was stored in
    Time expires = 0;
    std::string id;       // to revoke it
  };
  std::map<std::pair<std::string, std::string>, PoolToken> pool_tokens_;  // (pool, user)
  std::thread housekeeping_;
};

}  // namespace lockstep::kube
