// lockstepd's admission policy in one place (docs/policy.md): the rules of the policy file, read
// again when it changes (a file that no longer parses is logged and the rules stay as they
// were); on Kubernetes the default rules after them; who the asking user is (uid and groups from
// the identity source); the audit log; and the decisions counted for /metrics.
//
// Decide is pure and quick (no I/O but the identity source's lookups): the controller may call
// it under its lock. Record writes the audit log: never under a lock others wait on.
// Thread-safety: every method from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "identity/user_directory.h"
#include "policy/audit_log.h"
#include "policy/policy.h"

namespace lockstep::policy {

struct GateOptions {
  std::string policy_file;  // "": no file
  bool kubernetes_defaults = false;
  std::string audit_log;  // required
  std::uint64_t audit_max_bytes = 64ull << 20;
  int audit_keep = 5;
  std::chrono::milliseconds reload_period{2000};
  // The identity source now; null or returning null: the host's users.
  std::function<std::shared_ptr<const identity::UserDirectory>()> directory;
  std::vector<std::string> storage_paths;  // hostPaths allowed (the declared storage)
  std::vector<std::string> trusted_users;  // Kubernetes users whose pods are not judged
};

class PolicyGate {
 public:
  // Reads the policy file (an error names its line and rule) and opens the audit log.
  static Result<std::unique_ptr<PolicyGate>> Open(GateOptions options);
  ~PolicyGate();  // stops the watch
  PolicyGate(const PolicyGate&) = delete;
  PolicyGate& operator=(const PolicyGate&) = delete;

  // Fills in `r`'s uid and adds its group names from the identity source (by `r.user`, else by
  // `r.uid`), when it knows the user.
  void Identify(Request& r) const;
  Decision Decide(const Request& r) const;
  // The audit line and the counters; `caller` is who asked (an operator testing, the API
  // server), when not the request's user.
  void Record(const Request& r, const Decision& d, const std::string& caller = "");
  // Identify, Decide and Record.
  Decision Check(Request r, const std::string& caller = "");

  bool Trusted(const std::string& kubernetes_user) const;
  void SetStorage(std::vector<std::string> paths);
  // Reads the file again when its text changed: true when the rules changed. An error (the
  // file's line and rule) leaves them as they were.
  Result<bool> Reload();
  // A thread that calls Reload() every reload_period and logs what happened.
  void Watch();

  std::vector<std::string> AuditTail(std::size_t lines) const { return audit_->Tail(lines); }
  // Prometheus text: lockstep_policy_decisions_total{kind,verdict,rule} and the rule count.
  std::string MetricsText() const;
  std::size_t RuleCount() const;
  // A decision as the API answers `lockstep policy test` (docs/api.md, "Policy").
  static nlohmann::json DecisionJson(const Request& r, const Decision& d);

 private:
  PolicyGate(GateOptions options, std::unique_ptr<AuditLog> audit);
  Result<std::string> ReadFile() const;

  const GateOptions options_;
  std::unique_ptr<AuditLog> audit_;
  mutable std::mutex mu_;
  std::shared_ptr<const Policy> policy_;  // guarded by mu_
  std::string text_;                      // guarded by mu_: the file's text policy_ came from
  std::vector<Rule> defaults_;
  std::vector<std::string> storage_;  // guarded by mu_
  // (kind, verdict, rule) -> decisions; guarded by mu_.
  std::map<std::tuple<std::string, std::string, std::string>, std::uint64_t> counts_;
  // Who a user name is, looked up at most once per reload_period: the host's database (NSS)
  // reads /etc/passwd on every call, a tenth of a millisecond, for each pod of a webhook call.
  struct Known {
    std::chrono::steady_clock::time_point at;
    std::optional<std::uint32_t> uid;
    std::vector<std::string> groups;
  };
  mutable std::mutex known_mu_;
  mutable std::map<std::string, Known> known_;  // guarded by known_mu_
  Known Lookup(const std::string& user, std::optional<std::uint32_t> uid) const;
  std::string failed_text_;  // only the watch
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread watch_;
};

}  // namespace lockstep::policy
