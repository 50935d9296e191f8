# Slurm 22.05's --json for squeue, sinfo and sacct (openapi v0.0.38 / dbv0.0.38), from the REST
# API's objects. Pure functions; see slurm_json.h and docs/commands.md.
lockstep_cc_library(NAME lockstep_cli_slurm_json FOLDER cli/format
  SRCS
    ${CMAKE_CURRENT_LIST_DIR}/slurm_json_common.cc
    ${CMAKE_CURRENT_LIST_DIR}/slurm_json_squeue.cc
    ${CMAKE_CURRENT_LIST_DIR}/slurm_json_sinfo.cc
    ${CMAKE_CURRENT_LIST_DIR}/slurm_json_sacct.cc
    ${CMAKE_CURRENT_LIST_DIR}/slurm_yaml.cc
  DEPS lockstep_common nlohmann_json::nlohmann_json)

lockstep_cc_test(NAME cli_slurm_json_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/slurm_json_test.cc
  DEPS lockstep_cli_slurm_json)

# --yaml's emitter, parsed back by yaml-cpp (only this test links it: lockstep-slurm has no YAML
# library).
lockstep_cc_test(NAME cli_slurm_yaml_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/slurm_yaml_test.cc
  DEPS lockstep_cli_slurm_json yaml-cpp)
