#include "policy/audit_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>

#include "common/log.h"

namespace lockstep::policy {
namespace {

int OpenForAppend(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
}

}  // namespace

Result<std::unique_ptr<AuditLog>> AuditLog::Open(std::string path, std::uint64_t max_bytes,
                                                 int keep) {
  const int fd = OpenForAppend(path);
  if (fd < 0) return IoError("cannot open the audit log " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return IoError("the audit log " + path + " is not a regular file");
  }
  // Decisions name users and what they asked for: the owner (lockstepd) alone reads them.
  ::fchmod(fd, 0600);
  return std::unique_ptr<AuditLog>(
      new AuditLog(std::move(path), max_bytes, keep, fd, static_cast<std::uint64_t>(st.st_size)));
}

AuditLog::AuditLog(std::string path, std::uint64_t max_bytes, int keep, int fd,
                   std::uint64_t size)
    : path_(std::move(path)), max_bytes_(max_bytes), keep_(keep), fd_(fd), size_(size) {}

AuditLog::~AuditLog() {
  if (fd_ >= 0) ::close(fd_);
}

void AuditLog::RotateLocked() {
  for (int i = keep_ - 1; i >= 1; --i)
    ::rename((path_ + "." + std::to_string(i)).c_str(),
             (path_ + "." + std::to_string(i + 1)).c_str());
  ::rename(path_.c_str(), (path_ + ".1").c_str());
  ::close(fd_);
  fd_ = OpenForAppend(path_);
  size_ = 0;
}

void AuditLog::Append(const std::string& line) {
  std::string text = line;
  text += '\n';
  std::lock_guard<std::mutex> lock(mu_);
  if (size_ > 0 && size_ + text.size() > max_bytes_) RotateLocked();
  const ssize_t n = fd_ < 0 ? -1 : ::write(fd_, text.data(), text.size());
  if (n == static_cast<ssize_t>(text.size())) {
    size_ += text.size();
    failing_ = false;
    return;
  }
  if (!failing_) log::Error("audit log {}: write failed: {}", path_, std::strerror(errno));
  failing_ = true;
}

std::vector<std::string> AuditLog::Tail(std::size_t lines) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::deque<std::string> kept;
  // Newest file first; stop once enough lines are kept.
  for (int i = 0; i <= keep_ && kept.size() < lines; ++i) {
    const std::string name = i == 0 ? path_ : path_ + "." + std::to_string(i);
    std::ifstream in(name);
    if (!in) break;
    std::deque<std::string> file;
    for (std::string l; std::getline(in, l);) {
      file.push_back(std::move(l));
      if (file.size() > lines) file.pop_front();
    }
    while (!file.empty() && kept.size() < lines) {
      kept.push_front(std::move(file.back()));
      file.pop_back();
    }
  }
  return {kept.begin(), kept.end()};
}

}  // namespace lockstep::policy
