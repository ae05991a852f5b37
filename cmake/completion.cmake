# cmake -DCORDON=BINARY -DSHELL_NAME=bash|zsh|fish -DOUT=FILE -P completion.cmake
# Writes `cordon completion SHELL_NAME` to OUT (a build step: CMakeLists.txt, completions).
get_filename_component(dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
execute_process(COMMAND ${CORDON} completion ${SHELL_NAME} OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "${CORDON} completion ${SHELL_NAME} failed (${rc})")
endif()
file(RENAME ${OUT}.tmp ${OUT})
