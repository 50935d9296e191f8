list(APPEND SPEC_SRCS
  ${CMAKE_CURRENT_SOURCE_DIR}/yaml_reader.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/cluster_config.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/cluster_config_nodes.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/cluster_config_policy.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/cluster_config_kubernetes.cc)
list(APPEND SPEC_TESTS
  ${CMAKE_CURRENT_SOURCE_DIR}/yaml_reader_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/cluster_config_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/cluster_config_nodes_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/cluster_config_policy_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/cluster_config_kubernetes_test.cc)
