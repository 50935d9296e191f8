// The admission audit log (docs/policy.md, "Audit log"): one JSON line per decision, appended to
// a file only its owner reads (0600), rotated when it grows past a size: audit.log becomes
// audit.log.1, .1 becomes .2, ..., and the oldest beyond `keep` goes.
//
// Thread-safety: Append and Tail from any thread (one mutex; an append is one write(2)).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep::policy {

class AuditLog {
 public:
  // Opens (creates 0600) `path` for appending; its directory must exist.
  static Result<std::unique_ptr<AuditLog>> Open(std::string path, std::uint64_t max_bytes,
                                                int keep);
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Appends `line` and a newline; rotates first when the file would grow past max_bytes. A
  // failed write is logged once per failure streak and never stops a decision.
  void Append(const std::string& line);
  // The last `lines` lines, oldest first, from the current file and the rotated ones before it.
  std::vector<std::string> Tail(std::size_t lines) const;
  const std::string& path() const { return path_; }

 private:
  AuditLog(std::string path, std::uint64_t max_bytes, int keep, int fd, std::uint64_t size);
  void RotateLocked();

  const std::string path_;
  const std::uint64_t max_bytes_;
  const int keep_;
  mutable std::mutex mu_;
  int fd_;              // guarded by mu_
  std::uint64_t size_;  // guarded by mu_
  bool failing_ = false;
};

}  // namespace lockstep::policy
