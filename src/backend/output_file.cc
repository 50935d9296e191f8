#include "backend/output_file.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace lockstep::backend {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// Ok when st is a regular file of uid.
Status CheckOwnRegularFile(const std::string& path, const struct stat& st, std::uint32_t uid) {
  if (!S_ISREG(st.st_mode)) {
    return PermissionDenied(path + " is " + KindOf(st.st_mode) +
                            ", not a regular file: only a job's own output file can be read");
  }
  if (st.st_uid != uid) return PermissionDenied(path + " is not a file of the job's user");
  return Status::Ok();
}

Result<std::string> ReadTail(int fd, const std::string& path, const struct stat& st) {
  const off_t from = st.st_size > kMaxOutputBytes ? st.st_size - kMaxOutputBytes : 0;
  std::string text(static_cast<std::size_t>(st.st_size - from), '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), from);
  if (n < 0) return IoError(path + ": " + std::strerror(errno));
  text.resize(static_cast<std::size_t>(n));
  return text;
}

// What looking at the path and opening it gave: the file's lstat, and the descriptor when it was
// opened. `step` names what failed with `err`.
struct Opened {
  enum Step : int { kOk, kCredentials, kLook, kOpen } step = kOk;
  int err = 0;
  struct stat before {};
  int fd = -1;
};

Status Explain(const std::string& path, const Opened& o) {
  if (o.step == Opened::kCredentials)
    return Internal(path + ": cannot look at it as the job's user: " + std::strerror(o.err));
  if (o.step == Opened::kOpen && o.err == ELOOP)
    return PermissionDenied(path + " is a symbolic link; refusing it");
  // As the job's user: a directory it may not search hides what lies beyond it, present or not.
  if (o.err == EACCES || o.err == EPERM)
    return PermissionDenied(path + ": " + std::strerror(o.err) + " (for the job's user)");
  return NotFound(path + ": " + std::strerror(o.err));
}

// Looks, then opens: a device is never opened (opening one may act, as a tape's rewinds).
// O_NONBLOCK: if a FIFO is swapped in after the look, opening and reading it do not wait for a
// writer; O_NOFOLLOW: nor is a symbolic link followed. System calls only: it runs in a child of
// a multi-threaded process too.
Opened LookAndOpen(const char* path, std::uint32_t uid) {
  Opened o;
  if (::lstat(path, &o.before) != 0) {
    o.step = Opened::kLook, o.err = errno;
    return o;
  }
  if (!S_ISREG(o.before.st_mode) || o.before.st_uid != uid) return o;  // the caller says why
  o.fd = ::open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (o.fd < 0) o.step = Opened::kOpen, o.err = errno;
  return o;
}

// The user's groups, looked up before the fork (the child may not allocate). A uid without an
// account gets the overflow group and no others.
struct Credentials {
  gid_t gid = 65534;
  std::vector<gid_t> groups;
};

Credentials CredentialsOf(std::uint32_t uid) {
  Credentials c;
  passwd pw{}, *found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) return c;
  c.gid = pw.pw_gid;
  int n = 64;
  c.groups.resize(static_cast<std::size_t>(n));
  if (::getgrouplist(pw.pw_name, pw.pw_gid, c.groups.data(), &n) < 0) {
    c.groups.resize(static_cast<std::size_t>(n));
    if (::getgrouplist(pw.pw_name, pw.pw_gid, c.groups.data(), &n) < 0) n = 0;
  }
  c.groups.resize(static_cast<std::size_t>(std::max(n, 0)));
  return c;
}

// LookAndOpen in a child process with the user's credentials (lockstepd runs as root, and the
// path is the user's): what the user may not see, lockstepd does not see either. The descriptor
// comes back over a socket pair.
Opened LookAndOpenAs(const std::string& path, std::uint32_t uid) {
  const Credentials creds = CredentialsOf(uid);
  int pair[2];
  Opened failed;
  failed.step = Opened::kCredentials;
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    failed.err = errno;
    return failed;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Raw system calls: they change this process's only thread, and glibc's wrappers are not
    // async-signal-safe here.
    Opened o;
    if (::syscall(SYS_setgroups, creds.groups.size(), creds.groups.data()) != 0 ||
        ::syscall(SYS_setresgid, creds.gid, creds.gid, creds.gid) != 0 ||
        ::syscall(SYS_setresuid, uid, uid, uid) != 0) {
      o.step = Opened::kCredentials, o.err = errno;
    } else {
      o = LookAndOpen(path.c_str(), uid);
    }
    iovec iov{&o, sizeof o};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov, msg.msg_iovlen = 1;
    if (o.fd >= 0) {
      msg.msg_control = control, msg.msg_controllen = sizeof control;
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &o.fd, sizeof(int));
    }
    ::_exit(::sendmsg(pair[1], &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof o) ? 0 : 1);
  }
  ::close(pair[1]);
  if (pid < 0) {
    failed.err = errno;
    ::close(pair[0]);
    return failed;
  }
  Opened o;
  iovec iov{&o, sizeof o};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov, msg.msg_iovlen = 1;
  msg.msg_control = control, msg.msg_controllen = sizeof control;
  ssize_t n;
  do n = ::recvmsg(pair[0], &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  while (n < 0 && errno == EINTR);
  const int recv_errno = errno;
  ::close(pair[0]);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  o.fd = -1;  // the child's number; ours comes with the message
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); n > 0 && c != nullptr; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      std::memcpy(&o.fd, CMSG_DATA(c), sizeof(int));
  if (n != static_cast<ssize_t>(sizeof o)) {
    if (o.fd >= 0) ::close(o.fd);
    failed.err = n < 0 ? recv_errno : EPROTO;
    return failed;
  }
  return o;
}

}  // namespace

Result<std::string> ReadOwnOutput(const std::string& path, std::uint32_t uid) {
  // As the job's user when lockstepd may become it; else lockstepd is that user already (a
  // personal cluster), or may read no more than it could.
  const bool as_user = ::geteuid() == 0 && uid != 0;
  Opened o = as_user ? LookAndOpenAs(path, uid) : LookAndOpen(path.c_str(), uid);
  if (o.step != Opened::kOk) return Explain(path, o);
  if (o.fd < 0) return CheckOwnRegularFile(path, o.before, uid);  // refused before opening
  const int fd = o.fd;
  const struct stat& before = o.before;
  struct stat st {};
  Result<std::string> text = Internal("unreached");
  if (::fstat(fd, &st) != 0) {
    text = IoError(path + ": " + std::strerror(errno));
  } else if (Status own = CheckOwnRegularFile(path, st, uid); !own.ok()) {
    text = own;
  } else if (st.st_dev != before.st_dev || st.st_ino != before.st_ino) {
    text = PermissionDenied(path + " changed while it was opened; try again");
  } else {
    text = ReadTail(fd, path, st);
  }
  ::close(fd);
  return text;
}

}  // namespace lockstep::backend
