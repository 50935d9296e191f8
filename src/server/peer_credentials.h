// The caller on the Unix socket: the peer's uid and gid as the kernel recorded them at connect.
#pragma once

#include "common/status.h"
#include "server/caller.h"

namespace lockstep::server {

// The peer of a connected Unix stream socket (SO_PEERCRED), with an empty user name. IoError
// when the kernel does not say: the server then refuses the connection (an unknown peer is
// nobody, never uid 0).
Result<Caller> ReadPeerCredentials(int fd);

}  // namespace lockstep::server
