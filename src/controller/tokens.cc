#include "common/log.h"
#include "controller/tokens.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pwd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace lockstep::controller {
namespace {

std::string Hex(const unsigned char* bytes, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

// A record of the table: everything but the token itself.
struct Entry {
  Caller caller;
  Time created = 0;
  Time expires = 0;
};

std::string Encode(const Entry& e) {
  return nlohmann::json{{"user", e.caller.user},
                        {"uid", e.caller.uid},
                        {"gid", e.caller.gid},
                        {"created", e.created},
                        {"expires", e.expires}}
      .dump();
}

Result<Entry> Decode(const std::string& value) {
  nlohmann::json j = nlohmann::json::parse(value, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Internal("a token record is not JSON");
  try {
    Entry e;
    e.caller.user = j.at("user").get<std::string>();
    e.caller.uid = j.at("uid").get<std::uint32_t>();
    e.caller.gid = j.at("gid").get<std::uint32_t>();
    e.created = j.value("created", Time{0});
    e.expires = j.at("expires").get<Time>();
    return e;
  } catch (const std::exception& ex) {
    return Internal(std::string("a token record is malformed: ") + ex.what());
  }
}

}  // namespace

std::string TokenRegistry::KeyOf(std::string_view token) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(token.data(), token.size(), digest, &len, EVP_sha256(), nullptr) != 1) {
    log::Error("SHA-256 failed");
    std::abort();  // libcrypto without SHA-256 is a broken installation, not bad input
  }
  return Hex(digest, len);
}

std::string TokenRegistry::IdOf(std::string_view token) {
  return KeyOf(token).substr(0, kTokenIdLength);
}

std::optional<std::string> SystemUserNameOf(std::uint32_t uid) {
  passwd pw{}, *found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || !found) return std::nullopt;
  return std::string(pw.pw_name);
}

Result<std::string> TokenRegistry::Issue(const Caller& who, Seconds lifespan, Time now) {
  if (lifespan < 1 || lifespan > kMaxTokenLifespan)
    return InvalidArgument("lifespan must be between 1 and " + std::to_string(kMaxTokenLifespan) +
                           " seconds");
  unsigned char random[32];
  if (RAND_bytes(random, sizeof random) != 1)
    return Internal("cannot draw random bytes for a token");
  std::string token = Hex(random, sizeof random);
  Entry e{who, now, now + lifespan};
  Status s = store_.Put({{kTokenTable, KeyOf(token), Encode(e)}});
  if (!s.ok()) return s;
  return token;
}

Result<Caller> TokenRegistry::Authenticate(std::string_view token, Time now) {
  if (token.empty()) return PermissionDenied("no token");
  std::string key = KeyOf(token);
  Result<std::optional<std::string>> value = store_.Get(kTokenTable, key);
  if (!value.ok()) return value.status();
  if (!value->has_value()) return PermissionDenied("invalid token");
  Result<Entry> e = Decode(**value);
  if (!e.ok()) return e.status();
  if (e->expires <= now) {
    // Best effort: a token that failed to go is refused all the same and removed at next start.
    (void)store_.Delete(kTokenTable, {key});
    return PermissionDenied("token expired");
  }
  std::optional<std::string> name = user_name_of_(e->caller.uid);
  if (!name) {
    return PermissionDenied("token refused: its user " + e->caller.user + " (uid " +
                            std::to_string(e->caller.uid) + ") no longer exists on this host");
  }
  if (*name != e->caller.user) {
    return PermissionDenied("token refused: uid " + std::to_string(e->caller.uid) +
                            " now belongs to " + *name + ", not to " + e->caller.user);
  }
  return e->caller;
}

namespace {

bool IsTokenId(const std::string& id) {
  return id.size() == TokenRegistry::kTokenIdLength &&
         id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

Result<std::size_t> TokenRegistry::Revoke(const Caller& caller, bool caller_is_operator,
                                          const TokenRevocation& what) {
  if (what.id.empty() == what.user.empty())
    return InvalidArgument("token revoke: give a token id or a user, not both");
  if (!what.id.empty() && !IsTokenId(what.id))
    return InvalidArgument("token revoke: '" + what.id + "' is not a token id (" +
                           std::to_string(kTokenIdLength) + " hex digits)");
  if (!what.user.empty() && what.user != caller.user && !caller_is_operator)
    return PermissionDenied("access/permission denied: " + caller.user +
                            " may revoke only the tokens of " + caller.user);
  Result<std::vector<store::Record>> records = store_.Scan(kTokenTable);
  if (!records.ok()) return records.status();
  std::vector<std::string> doomed;
  for (const store::Record& r : *records) {
    Result<Entry> e = Decode(r.value);
    if (!e.ok()) continue;
    const bool named = what.id.empty() ? e->caller.user == what.user
                                       : r.key.compare(0, kTokenIdLength, what.id) == 0;
    const bool allowed = caller_is_operator || e->caller.uid == caller.uid;
    if (named && allowed) doomed.push_back(r.key);
  }
  if (doomed.empty() && !what.id.empty())
    return NotFound("token revoke: no token " + what.id + " of " + caller.user);
  const std::size_t n = doomed.size();
  if (n > 0) LOCKSTEP_RETURN_IF_ERROR(store_.Delete(kTokenTable, std::move(doomed)));
  return n;
}

Result<std::size_t> TokenRegistry::RemoveExpired(Time now) {
  Result<std::vector<store::Record>> records = store_.Scan(kTokenTable);
  if (!records.ok()) return records.status();
  std::vector<std::string> expired;
  for (const store::Record& r : *records) {
    Result<Entry> e = Decode(r.value);
    if (!e.ok() || e->expires <= now) expired.push_back(r.key);
  }
  if (expired.empty()) return std::size_t{0};
  std::size_t n = expired.size();
  Status s = store_.Delete(kTokenTable, std::move(expired));
  if (!s.ok()) return s;
  return n;
}

Result<Caller> TokenSubject(const Controller& controller, const Caller& caller,
                            const std::string& user, const identity::UserDirectory* directory) {
  if (user.empty() || user == caller.user) return caller;
  if (!controller.IsOperator(caller.uid))
    return PermissionDenied("access/permission denied: " + caller.user +
                            " may get a token only for " + caller.user);
  std::optional<identity::UserRecord> found =
      directory ? directory->UserByName(user) : identity::HostDirectory()->UserByName(user);
  if (!found) return NotFound("invalid user: " + user);
  return Caller{found->uid, found->gid, found->name};
}

Result<nlohmann::json> RevokeTokens(const Controller& controller, TokenRegistry& tokens,
                                    const Caller& caller, const nlohmann::json& body) {
  TokenRevocation what;
  if (!body.is_object()) return InvalidArgument("expected {\"id\": ID} or {\"user\": NAME}");
  for (const auto& [key, value] : body.items()) {
    if ((key != "id" && key != "user") || !value.is_string())
      return InvalidArgument("token revoke: unexpected '" + key +
                             "'; expected {\"id\": ID} or {\"user\": NAME}");
    (key == "id" ? what.id : what.user) = value.get<std::string>();
  }
  Result<std::size_t> n = tokens.Revoke(caller, controller.IsOperator(caller.uid), what);
  if (!n.ok()) return n.status();
  return nlohmann::json{{"revoked", *n}};
}

}  // namespace lockstep::controller
