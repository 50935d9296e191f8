// A user's login environment on Kubernetes (docs/login.md): the pod lockstep-login-<user> and
// the Secret of the same name that holds what the pod alone may read (the user's lockstep
// token, the CA to verify lockstepd with) and the user database its commands resolve names
// with. Pure functions over JSON; login_pods.h creates and deletes them.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/kubernetes/objects/pod_builder.h"
#include "common/types.h"

namespace lockstep::kube {

// Labels and annotations of login pods and their Secrets.
inline constexpr char kLoginUserLabel[] = "lockstep.dev/login-user";
inline constexpr char kLoginUidAnnotation[] = "lockstep.dev/login-uid";
inline constexpr char kLoginPoolLabel[] = "lockstep.dev/login-pool";
// A pool pod's per-user token directories (<dir>/<uid>/token), an emptyDir in memory.
inline constexpr char kLoginPoolTokenDir[] = "/run/lockstep-users";
// When the pod's last session ended (Unix seconds); absent while one is open.
inline constexpr char kLoginIdleSinceAnnotation[] = "lockstep.dev/idle-since";
inline constexpr char kLoginTokenExpiresAnnotation[] = "lockstep.dev/token-expires";
// Where the Secret is mounted in the pod.
inline constexpr char kLoginSecretDir[] = "/var/run/lockstep";

struct LoginPodSpec {
  std::string ns;
  std::string user;
  std::uint32_t uid = 0, gid = 0;
  std::vector<std::uint32_t> groups;  // supplementary
  std::string home;                   // set HOME and the working directory when mounted
  bool home_mounted = false;
  std::string shell = "/bin/sh";
  std::string image;
  std::int64_t cpu_millis = 1000;
  std::int64_t memory_mb = 2048;
  std::string node;  // spec.nodeName: lockstepd places login pods itself
  bool host_network = false;
  std::vector<HostMount> mounts;  // the declared file systems, the home
  std::string server;             // LOCKSTEP_SERVER in the pod; "" : none
  bool has_ca = false;            // the Secret holds ca.crt
  // Not 0: the pod's main process is the user's own sshd on this port (login.ssh), with the
  // Secret's host key and authorized_keys; the container's port "ssh".
  std::int32_t ssh_port = 0;
};

// sshd's port in a login pod on the pods' network (host-network pods listen on their Service's
// node port instead, which the apiserver keeps unique).
inline constexpr std::int32_t kLoginSshPort = 2222;

// "lockstep-login-<user>" when that is a DNS-1123 label (63 characters at most), else the user's
// name made one (lower case, '_' and '.' to '-') with a hash of the real name after it, so two
// users never share a pod.
std::string LoginPodName(const std::string& user);

// The pod: running as the user (uid, gid, supplementary groups, non-root), no privilege
// escalation, every capability dropped, a read-only root with /tmp an emptyDir, no service
// account token, /etc/passwd and /etc/group from the Secret, the Secret at kLoginSecretDir
// readable by the user alone, the mounts with HostToContainer propagation; a shell loop that
// ends at SIGTERM as its main process. InvalidArgument for a uid 0 or a name that is not plain.
Result<nlohmann::json> BuildLoginPod(const LoginPodSpec& spec);

// A team's shared login pod (login.pools): root in the pod with only SETUID, SETGID and CHOWN,
// so that each session runs as its user (`lockstep login-as`), never escalating; no token of its
// own (each user's goes to kLoginPoolTokenDir/<uid>, theirs alone).
struct LoginPoolPodSpec {
  std::string ns;
  std::string pool;
  std::string image;
  std::int64_t cpu_millis = 1000;
  std::int64_t memory_mb = 2048;
  std::string node;
  bool host_network = false;
  std::vector<HostMount> mounts;
  std::string server;
  bool has_ca = false;
};

// "lockstep-login-pool-<pool>".
std::string LoginPoolPodName(const std::string& pool);
Result<nlohmann::json> BuildLoginPoolPod(const LoginPoolPodSpec& spec);

// What a login pod's Secret holds (the pod reads each as a file of kLoginSecretDir).
struct LoginSecretData {
  std::string token;
  Time token_expires = 0;
  std::string passwd, group;  // /etc/passwd and /etc/group
  std::string ca_pem;         // "" : none
  std::string authorized_keys;  // the user's SSH public keys, one per line
  std::string ssh_host_key;     // PEM; "" : none (no sshd)
};

// The Secret: `token`, `passwd`, `group`, `authorized_keys`, and `ca.crt` and `ssh_host_key`
// when given.
nlohmann::json BuildLoginSecret(const std::string& ns, const std::string& user,
                                const LoginSecretData& data);

// The NodePort Service of a user's sshd (login.ssh): port 22 to the pod's port "ssh"; the
// apiserver picks the node port.
nlohmann::json BuildLoginService(const std::string& ns, const std::string& user);

}  // namespace lockstep::kube
