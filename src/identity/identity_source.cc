#include "identity/identity_source.h"

#include <fstream>
#include <sstream>

#include "common/log.h"

namespace lockstep::identity {
namespace {

Result<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("identity: cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return IoError("identity: cannot read " + path);
  return s.str();
}

}  // namespace

DirectoryChange Compare(const UserDirectory& before, const UserDirectory& after) {
  DirectoryChange change;
  for (const UserRecord& u : before.Users()) {
    std::optional<UserRecord> now = after.UserByName(u.name);
    if (!now || now->uid != u.uid)
      change.removed.push_back(u);
    else if (!(*now == u))
      change.changed.push_back(*now);
  }
  for (const UserRecord& u : after.Users()) {
    std::optional<UserRecord> then = before.UserByName(u.name);
    if (!then || then->uid != u.uid) change.added.push_back(u);
  }
  return change;
}

Result<std::unique_ptr<IdentitySource>> IdentitySource::Open(const config::IdentityConfig& config) {
  std::unique_ptr<IdentitySource> source(new IdentitySource(config));
  auto read = source->Read();
  if (!read.ok()) return read.status();
  source->text_ = std::move(read->first);
  source->current_ = std::move(read->second);
  return source;
}

IdentitySource::~IdentitySource() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (watch_.joinable()) watch_.join();
}

Result<std::pair<std::string, std::shared_ptr<const UserDirectory>>> IdentitySource::Read() const {
  using Source = config::IdentityConfig::Source;
  if (config_.source == Source::kNss) return std::make_pair(std::string(), HostDirectory());
  if (config_.source == Source::kYaml) {
    Result<std::string> text = ReadText(config_.users_file);
    if (!text.ok()) return text.status();
    auto dir = ParseUsersYaml(*text, config_.users_file);
    if (!dir.ok()) return dir.status();
    return std::make_pair(std::move(*text), std::shared_ptr<const UserDirectory>(*dir));
  }
  Result<std::string> passwd = ReadText(config_.passwd_file);
  if (!passwd.ok()) return passwd.status();
  Result<std::string> group = ReadText(config_.group_file);
  if (!group.ok()) return group.status();
  auto dir = ParsePasswdAndGroup(*passwd, config_.passwd_file, *group, config_.group_file);
  if (!dir.ok()) return dir.status();
  return std::make_pair(*passwd + '\0' + *group, std::shared_ptr<const UserDirectory>(*dir));
}

std::shared_ptr<const UserDirectory> IdentitySource::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

Result<DirectoryChange> IdentitySource::Reload() {
  if (config_.source == config::IdentityConfig::Source::kNss) return DirectoryChange{};
  auto read = Read();
  if (!read.ok()) return read.status();
  std::shared_ptr<const UserDirectory> before;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (read->first == text_) return DirectoryChange{};
    before = current_;
    text_ = std::move(read->first);
    current_ = read->second;
  }
  return Compare(*before, *read->second);
}

void IdentitySource::Watch(Changed changed) {
  watch_ = std::thread([this, changed = std::move(changed)] { Loop(changed); });
}

void IdentitySource::Loop(Changed changed) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::seconds(config_.reload_period), [&] { return stopping_; });
    if (stopping_) return;
    lock.unlock();
    Result<DirectoryChange> change = Reload();
    if (!change.ok()) {
      if (change.status().message() != failed_text_)
        log::Error("{} (the users stay as they were)", change.status().message());
      failed_text_ = change.status().message();
    } else {
      failed_text_.clear();
      if (!change->removed.empty() || !change->changed.empty() || !change->added.empty()) {
        for (const UserRecord& u : change->removed)
          log::Info("identity: user {} (uid {}) was removed", u.name, u.uid);
        changed(*change);
      }
    }
    lock.lock();
  }
}

}  // namespace lockstep::identity
