# saguaro_embed(TARGET FUNCTION BASE FILES...): compiles the files' text into TARGET,
# reachable through `std::vector<std::pair<std::string, std::string>> FUNCTION()`.
function(saguaro_embed target function base)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${function}.cpp")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND "${CMAKE_COMMAND}" -DOUT=${out} -DFUNCTION=${function} "-DFILES=${ARGN}"
            -DBASE=${base} -P "${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake"
    DEPENDS ${ARGN} "${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake"
    COMMENT "Embedding ${function}"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
endfunction()
