// `scontrol show reservation` and `sinfo -T` from GET /api/v1/reservations (docs/api.md), in
// Slurm 22.05's layouts (src/api/reservation_info.c; sinfo's "%-10R %8t  %19S  %19E  %11D  %N").
// Pure functions; thread-safe. Times are local, as Slurm prints them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace lockstep::cli {

// `reservations`: the answer's "reservations" array. None: "No reservations in the system\n".
// `name` not empty: only that one; absent: "Reservation NAME not found\n" (Slurm's words).
std::string FormatScontrolShowReservations(const nlohmann::json& reservations,
                                           const std::string& name);

// sinfo -T (-l adds the date line `long_header` before, as Slurm's).
std::string FormatSinfoReservations(const nlohmann::json& reservations);

}  // namespace lockstep::cli
