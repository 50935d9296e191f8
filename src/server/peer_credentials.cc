#include "server/peer_credentials.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace lockstep::server {

Result<Caller> ReadPeerCredentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    return IoError(std::string("cannot read the peer's credentials (SO_PEERCRED): ") +
                   std::strerror(errno));
  if (len != sizeof cred) return IoError("cannot read the peer's credentials: short answer");
  Caller c;
  c.uid = cred.uid;
  c.gid = cred.gid;
  c.transport = Transport::kUnixSocket;
  return c;
}

}  // namespace lockstep::server
