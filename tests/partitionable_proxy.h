// A TCP forwarder on 127.0.0.1 to a local port, which a test can cut off as a network partition
// would: after Partition() no byte is forwarded either way and new connections are accepted but
// answered by nothing, so the client's requests hang until their own timeouts (as they do when
// packets are dropped), instead of failing fast. Test-only.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace lockstep::testing {

// Owns its threads and sockets; the destructor closes them all. Partition() is thread-safe.
class PartitionableProxy {
 public:
  explicit PartitionableProxy(int target_port) : target_port_(target_port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = Loopback(0);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listen_fd_, 64);
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~PartitionableProxy() {
    stop_ = true;
    accept_thread_.join();  // then no pump is added; each notices stop_ within its poll period
    for (std::thread& t : pumps_) t.join();
    ::close(listen_fd_);
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : fds_) ::close(fd);
  }
  PartitionableProxy(const PartitionableProxy&) = delete;
  PartitionableProxy& operator=(const PartitionableProxy&) = delete;

  int port() const { return port_; }
  void Partition() { partitioned_ = true; }

 private:
  static sockaddr_in Loopback(int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    return a;
  }
  // Waits up to 50 ms for `fd` to be readable: the threads look at stop_ and partitioned_
  // between waits.
  static bool Readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 50) > 0;
  }
  void AcceptLoop() {
    while (!stop_) {
      if (!Readable(listen_fd_)) continue;
      const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a = Loopback(target_port_);
      {
        std::lock_guard<std::mutex> lock(mu_);
        fds_.push_back(client);
        fds_.push_back(server);
      }
      if (partitioned_ || ::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
        continue;  // accepted, never answered
      pumps_.emplace_back([this, client, server] { Pump(client, server); });
      pumps_.emplace_back([this, client, server] { Pump(server, client); });
    }
  }
  void Pump(int from, int to) {
    char buf[16384];
    while (!stop_) {
      if (partitioned_ || !Readable(from)) continue;
      const ssize_t n = ::read(from, buf, sizeof buf);
      if (n <= 0) {
        ::shutdown(to, SHUT_WR);
        return;
      }
      for (ssize_t done = 0; done < n;) {
        const ssize_t w = ::write(to, buf + done, static_cast<size_t>(n - done));
        if (w <= 0) return;
        done += w;
      }
    }
  }

  const int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> partitioned_{false};
  std::mutex mu_;
  std::vector<int> fds_;              // guarded by mu_
  std::thread accept_thread_;
  std::vector<std::thread> pumps_;  // added by the accept thread only, joined after it
};

}  // namespace lockstep::testing
