# moesim_embed(<target> <namespace> <file>...): compiles the given text files
# into <target> as `const std::vector<util::EmbeddedFile>& <namespace>::EmbeddedFiles()`,
# each file named by its path relative to the source root. The shipped zoo and
# systems are data the binary always has, whatever the working directory.
function(moesim_embed target namespace)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}_embedded.cc")
  set(inputs "")
  foreach(f ${ARGN})
    list(APPEND inputs "${CMAKE_CURRENT_SOURCE_DIR}/${f}")
  endforeach()
  # A CMake list would split into several arguments; pass it comma-joined.
  string(REPLACE ";" "," joined "${inputs}")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DNAMESPACE=${namespace}
            -DROOT=${PROJECT_SOURCE_DIR} "-DINPUTS=${joined}"
            -P "${PROJECT_SOURCE_DIR}/cmake/embed_script.cmake"
    DEPENDS ${inputs} "${PROJECT_SOURCE_DIR}/cmake/embed_script.cmake"
    COMMENT "Embedding data files into ${target}"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
endfunction()
