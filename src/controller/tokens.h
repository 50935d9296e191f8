// Bearer tokens for the REST API on TCP, like Slurm's `scontrol token`: a user asks lockstepd
// (on the Unix socket, where the kernel vouches for the uid) for a token, and presents it later
// as `Authorization: Bearer <token>` from anywhere. lockstepd keeps only the SHA-256 of each
// token, durably in the store's table "tokens", with the user, uid, gid and expiry, so tokens
// survive a restart and a copy of the store discloses none of them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/types.h"
#include "controller/controller.h"
#include "identity/user_directory.h"
#include "store/store.h"

namespace lockstep::controller {

inline constexpr char kTokenTable[] = "tokens";
// Slurm's default lifespan of `scontrol token`.
inline constexpr Seconds kDefaultTokenLifespan = 1800;
// The longest a token may live: a year.
inline constexpr Seconds kMaxTokenLifespan = 365 * 24 * 3600;

// The name the host's user database gives a uid, or nothing when the uid has no user.
using UserNameOf = std::function<std::optional<std::string>(std::uint32_t uid)>;
// getpwuid_r.
std::optional<std::string> SystemUserNameOf(std::uint32_t uid);

// What to revoke: one token by its id, or every token of a user.
struct TokenRevocation {
  std::string id;    // TokenRegistry::IdOf of the token (printed when it was issued)
  std::string user;  // every token of this user
};

// Issues, checks and revokes tokens over the store.
//
// Ownership: the store is borrowed and must outlive the registry.
// Thread-safety: every method may be called from any number of threads at once (the registry
// keeps no state of its own; the store is thread-safe; user_name_of must be thread-safe).
// Time is passed in (Unix seconds); the registry reads no clock.
class TokenRegistry {
 public:
  explicit TokenRegistry(store::Store& store, UserNameOf user_name_of = SystemUserNameOf)
      : store_(store), user_name_of_(std::move(user_name_of)) {}

  // A new random token (256 bits, hex) for `who`, valid until now + lifespan. Durable when it
  // returns. InvalidArgument for a lifespan outside [1, kMaxTokenLifespan].
  Result<std::string> Issue(const Caller& who, Seconds lifespan, Time now);

  // The caller a token stands for. PermissionDenied ("invalid token" / "token expired") for a
  // token that is unknown or expired; an expired one is removed. PermissionDenied as well when
  // its user is gone from the host (the uid has no user, or a user of another name: a deleted
  // user's uid given to someone else); such a token is kept, in case the user database only
  // failed for a moment, and expires as usual. IoError when the store fails.
  Result<Caller> Authenticate(std::string_view token, Time now);

  // Removes one token (by id) or every token of a user, as `caller` asks: users revoke their own
  // tokens, operators anyone's. How many went. InvalidArgument unless exactly one of id and user
  // is given (an id is 16 hex digits); NotFound when no such token of the caller's (a token of
  // someone else is not named, so ids reveal nothing); PermissionDenied for another user's
  // tokens by name.
  Result<std::size_t> Revoke(const Caller& caller, bool caller_is_operator,
                             const TokenRevocation& what);

  // Removes every expired token (lockstepd calls it at start). Returns how many went.
  Result<std::size_t> RemoveExpired(Time now);

  // The store key of a token: the hex SHA-256 of its bytes.
  static std::string KeyOf(std::string_view token);
  // The token's public id: the first kTokenIdLength hex digits of its key. Printed at issue
  // time; it names the token for revocation and cannot be turned back into it.
  static std::string IdOf(std::string_view token);
  static constexpr std::size_t kTokenIdLength = 16;

 private:
  store::Store& store_;
  const UserNameOf user_name_of_;
};

// Whom a token asked for by `caller` may stand for: `user` (empty: the caller). A user may get
// a token only for themself; operators for anyone `directory` knows (null: the host's users).
// PermissionDenied or NotFound (no such user) otherwise.
Result<Caller> TokenSubject(const Controller& controller, const Caller& caller,
                            const std::string& user,
                            const identity::UserDirectory* directory = nullptr);

// The body of a revocation request ({"id": ID} or {"user": NAME}) decoded, applied for `caller`,
// and the answer {"revoked": N}. For the API's route POST /api/v1/tokens/revoke, which, like
// issuing, is served on the Unix socket only.
Result<nlohmann::json> RevokeTokens(const Controller& controller, TokenRegistry& tokens,
                                    const Caller& caller, const nlohmann::json& body);

}  // namespace lockstep::controller
