// scontrol's reservation verbs (docs/reservations.md): create reservation, update
// ReservationName=, delete ReservationName=; output and errors as Slurm's.
#pragma once

#include <string>
#include <vector>

#include "client/api_client.h"

namespace lockstep::cli {

// `words` are scontrol's arguments after the verb ("reservation" already taken off for create).
int CreateReservation(client::ApiClient& api, const std::vector<std::string>& words);
int UpdateReservation(client::ApiClient& api, const std::vector<std::string>& words);
// `name`: the value of ReservationName= (or `delete reservation NAME`).
int DeleteReservation(client::ApiClient& api, const std::string& name);

// Whether `word` is an abbreviation of "reservation" (scontrol's entity: res, reservation) or
// of "ReservationName" as a key (ReservationName=x, Reservation=x, res=x).
bool IsReservationEntity(const std::string& word);
bool IsReservationKey(const std::string& word);

}  // namespace lockstep::cli
