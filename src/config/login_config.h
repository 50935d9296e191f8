// The `identity:` and `login:` sections of the cluster YAML (docs/login.md): where lockstepd
// learns its users and groups, and the login environment each user gets. Plain values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/types.h"

namespace lockstep::config {

// Where users and groups come from. By default the host's own (NSS: getpwnam, getgrouplist);
// otherwise files that lockstepd reads and reads again when they change.
struct IdentityConfig {
  enum class Source : std::uint8_t {
    kNss,    // the host's user database
    kFiles,  // passwd_file and group_file, in /etc/passwd and /etc/group's format
    kYaml,   // users_file: a YAML list of users (and an optional list of groups)
  };
  Source source = Source::kNss;
  std::string users_file;
  std::string passwd_file;
  std::string group_file;
  // What becomes of the jobs of a user removed from the source: kept (they run as submitted),
  // or cancelled. Either way the user's login pod, tokens and sessions go at once.
  bool cancel_jobs_of_removed = false;
  // How often the files are looked at for a change.
  Seconds reload_period = 2;

  bool operator==(const IdentityConfig&) const = default;
};

// A login pod shared by a team (LoginSet-like): members of its groups log in to it, each
// session running as its user (docs/login.md, "Shared pools").
struct LoginPool {
  std::string name;                 // a DNS label of at most 40 characters
  std::vector<std::string> groups;  // group names of the identity source; members may log in
  std::int64_t cpu_millis = 0;      // 0: login.cpus
  std::int64_t memory_mb = 0;       // 0: login.memory
  bool operator==(const LoginPool&) const = default;
};

// Each user's login environment: on Kubernetes a pod of their own (lockstep-login-<user>), on
// bare hosts a shell on a login host.
struct LoginConfig {
  std::string image;  // "" : lockstep's own image (scripts/image.sh), docker.io/lockstep/lockstepd:<version>
  std::int64_t cpu_millis = 1000;  // `cpus`: 2, 0.5 or 500m
  std::int64_t memory_mb = 2048;
  std::map<std::string, std::string> node_selector;
  // A login pod without a session for this long is deleted; the next login makes it again.
  Seconds idle_timeout = 3600;
  // The declared file systems (storage: names) mounted in login pods; all of them by default.
  std::vector<std::string> storage;
  bool storage_all = true;
  // The user's home directory is mounted when it is on a declared file system.
  bool home = true;
  // What the Slurm commands in the pod reach ("https://HOST:PORT"); "" : lockstepd's --listen.
  std::string server;
  // The PEM file the commands verify the server with; "" : lockstepd's --tls-cert.
  std::string ca_cert;
  bool host_network = false;
  // Login pods run the user's own sshd (the image's /usr/sbin/sshd, as the user, keys from the
  // identity source) behind a NodePort Service: `lockstep login --ssh` says where.
  bool ssh = false;
  // Bare hosts: the login hosts; `lockstep login` elsewhere goes there with ssh. Empty: this host.
  std::vector<std::string> hosts;
  // A second name for `lockstep login`, as a site calls it (a link to lockstep by that name).
  std::string alias;
  // Shared pools for teams (`lockstep login --pool NAME`).
  std::vector<LoginPool> pools;

  bool operator==(const LoginConfig&) const = default;
};

}  // namespace lockstep::config
