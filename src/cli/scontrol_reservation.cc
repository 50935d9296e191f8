#include "cli/scontrol_reservation.h"

#include <cctype>
#include <cstdio>

#include "cli/cli_util.h"

namespace lockstep::cli {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool Abbreviates(const std::string& word, const std::string& full, std::size_t least) {
  const std::string w = Lower(word);
  return w.size() >= least && w.size() <= full.size() && full.compare(0, w.size(), w) == 0;
}

// A refusal of the words themselves ("Unknown parameter Foo=bar.  No reservation created.") is
// scontrol's own error; any other is lockstepd's answer to the request.
bool IsWordsError(const std::string& message) {
  return message.find("  No reservation ") != std::string::npos;
}

Result<nlohmann::json> Change(client::ApiClient& api, const std::string& action,
                              const std::vector<std::string>& words, const std::string& name) {
  nlohmann::json body = {{"action", action}, {"words", words}};
  if (!name.empty()) body["name"] = name;
  return api.Post("/api/v1/reservations", body);
}

}  // namespace

bool IsReservationEntity(const std::string& word) {
  return Abbreviates(word, "reservation", 3) || Abbreviates(word, "reservationname", 3);
}

bool IsReservationKey(const std::string& word) {
  const std::size_t eq = word.find('=');
  return eq != std::string::npos && IsReservationEntity(word.substr(0, eq));
}

int CreateReservation(client::ApiClient& api, const std::vector<std::string>& words) {
  Result<nlohmann::json> r = Change(api, "create", words, "");
  if (r.ok()) {
    std::printf("Reservation created: %s\n", r->value("name", "").c_str());
    return 0;
  }
  const std::string& m = r.status().message();
  if (IsWordsError(m))
    std::fprintf(stderr, "scontrol: error: %s\n", m.c_str());
  else
    std::fprintf(stderr, "Error creating the reservation: %s\n", m.c_str());
  return 1;
}

int UpdateReservation(client::ApiClient& api, const std::vector<std::string>& words) {
  Result<nlohmann::json> r = Change(api, "update", words, "");
  if (r.ok()) {
    std::printf("Reservation updated.\n");
    return 0;
  }
  const std::string& m = r.status().message();
  if (IsWordsError(m)) {
    std::fprintf(stderr, "scontrol: error: %s\n", m.c_str());
  } else {
    std::fprintf(stderr, "Error updating the reservation: %s\n", m.c_str());
    std::fprintf(stderr, "slurm_update error: %s\n", m.c_str());
  }
  return 1;
}

int DeleteReservation(client::ApiClient& api, const std::string& name) {
  Result<nlohmann::json> r = Change(api, "delete", {}, name);
  if (r.ok()) return 0;
  std::fprintf(stderr, "delete_reservation ReservationName=%s: %s\n", name.c_str(),
               r.status().message().c_str());
  return 1;
}

}  // namespace lockstep::cli
