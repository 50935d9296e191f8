// Where lockstepd's users and groups come from (config::IdentityConfig, docs/login.md): the host's
// user database, or files (passwd and group, or a YAML list) that it reads at start and again
// whenever their text changes. A file that no longer parses is logged and changes nothing: the
// directory stays as it was. The change says who was removed, so that their login pods, tokens,
// sessions and (if the YAML says so) jobs go at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "config/login_config.h"
#include "identity/user_directory.h"

namespace lockstep::identity {

struct DirectoryChange {
  std::vector<UserRecord> removed;  // gone from the source, or their uid changed
  std::vector<UserRecord> changed;  // still there with something else changed
  std::vector<UserRecord> added;    // new, or back with another uid
};

// What changed from `before` to `after`.
DirectoryChange Compare(const UserDirectory& before, const UserDirectory& after);

// Thread-safety: Current() and Reload() from any thread; Watch() once.
class IdentitySource {
 public:
  using Changed = std::function<void(const DirectoryChange&)>;

  // Reads the source once. An error (naming the file and line) when a file is missing or bad.
  static Result<std::unique_ptr<IdentitySource>> Open(const config::IdentityConfig& config);
  ~IdentitySource();  // stops the watch
  IdentitySource(const IdentitySource&) = delete;
  IdentitySource& operator=(const IdentitySource&) = delete;

  std::shared_ptr<const UserDirectory> Current() const;
  // Reads the files again. Changed text that parses replaces the directory; the change is
  // returned (empty when the text is the same). An error leaves the directory as it was.
  // The host's database is live: nothing to read again.
  Result<DirectoryChange> Reload();
  // A thread that calls Reload() every reload_period, and `changed` after each change; errors
  // are logged once per different text.
  void Watch(Changed changed);
  const config::IdentityConfig& config() const { return config_; }

 private:
  explicit IdentitySource(config::IdentityConfig config) : config_(std::move(config)) {}
  // The files' text and the directory they make.
  Result<std::pair<std::string, std::shared_ptr<const UserDirectory>>> Read() const;
  void Loop(Changed changed);

  const config::IdentityConfig config_;
  mutable std::mutex mu_;
  std::shared_ptr<const UserDirectory> current_;  // guarded by mu_
  std::string text_;                              // guarded by mu_: what current_ was read from
  std::string failed_text_;                       // only the watch: the last text that failed
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread watch_;
};

}  // namespace lockstep::identity
