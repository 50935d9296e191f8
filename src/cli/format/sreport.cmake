# sreport's cluster utilization and user top from the REST API's accounting, nodes and events.
# Pure functions; see sreport.h and docs/commands.md.
lockstep_cc_library(NAME lockstep_cli_sreport FOLDER cli/format
  SRCS
    ${CMAKE_CURRENT_LIST_DIR}/sreport.cc
    ${CMAKE_CURRENT_LIST_DIR}/sreport_usage.cc
  DEPS lockstep_cli_format lockstep_common nlohmann_json::nlohmann_json)

lockstep_cc_test(NAME cli_sreport_test
  SRCS ${CMAKE_CURRENT_LIST_DIR}/sreport_test.cc
  DEPS lockstep_cli_sreport)
