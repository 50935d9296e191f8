// Bearer tokens for the REST API on TCP, like Slurm's `scontrol token`: a user asks lockstepd
// (on the Unix socket, where the kernel vouches for the uid) for a token, and presents it later
// as `Authorization: Bearer <token>` from anywhere. lockstepd keeps only the SHA-256 of each
// token, durably in the store's table "tokens", with the user, uid, gid and expiry, so tokens
// survive a restart and a copy of the store discloses none of them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/types.h"
#include "controller/controller.h"
#include "store/store.h"

namespace lockstep::controller {

inline constexpr char kTokenTable[] = "tokens";
// Slurm's default lifespan of `scontrol token`.
inline constexpr Seconds kDefaultTokenLifespan = 1800;
// The longest a token may live: a year.
inline constexpr Seconds kMaxTokenLifespan = 365 * 24 * 3600;

// Issues and checks tokens over the store.
//
// Ownership: the store is borrowed and must outlive the registry.
// Thread-safety: every method may be called from any number of threads at once (the registry
// keeps no state of its own; the store is thread-safe).
// Time is passed in (Unix seconds); the registry reads no clock.
class TokenRegistry {
 public:
  explicit TokenRegistry(store::Store& store) : store_(store) {}

  // A new random token (256 bits, hex) for `who`, valid until now + lifespan. Durable when it
  // returns. InvalidArgument for a lifespan outside [1, kMaxTokenLifespan].
  Result<std::string> Issue(const Caller& who, Seconds lifespan, Time now);

  // The caller a token stands for. PermissionDenied ("invalid token" / "token expired") for a
  // token that is unknown or expired; an expired one is removed. IoError when the store fails.
  Result<Caller> Authenticate(std::string_view token, Time now);

  // Removes every expired token (lockstepd calls it at start). Returns how many went.
  Result<std::size_t> RemoveExpired(Time now);

  // The store key of a token: the hex SHA-256 of its bytes.
  static std::string KeyOf(std::string_view token);

 private:
  store::Store& store_;
};

// Whom a token asked for by `caller` may stand for: `user` (empty: the caller). A user may get
// a token only for themself; operators for anyone the system's user database knows.
// PermissionDenied or NotFound (no such user) otherwise.
Result<Caller> TokenSubject(const Controller& controller, const Caller& caller,
                            const std::string& user);

}  // namespace lockstep::controller
