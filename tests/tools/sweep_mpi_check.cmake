# `mpirun -n 2 moesim sweep` vs one process: the JSON on stdout and the CSV
# file must be the same bytes (--no-timing leaves the wall time out).
# -DMOESIM=<binary> -DMPIEXEC=<mpirun> -DSPEC=<sweep .textproto>
# -DSCRATCH=<folder>
file(MAKE_DIRECTORY ${SCRATCH})
execute_process(
  COMMAND ${MOESIM} sweep ${SPEC} --json --no-timing -j 1
          --csv ${SCRATCH}/single.csv
  OUTPUT_VARIABLE single RESULT_VARIABLE single_rc ERROR_VARIABLE single_err)
if(NOT single_rc EQUAL 0)
  message(FATAL_ERROR "single process: exit ${single_rc}: ${single_err}")
endif()
execute_process(
  COMMAND ${MPIEXEC} -n 2 --oversubscribe
          ${MOESIM} sweep ${SPEC} --json --no-timing -j 1
          --csv ${SCRATCH}/ranks.csv
  OUTPUT_VARIABLE ranks RESULT_VARIABLE ranks_rc ERROR_VARIABLE ranks_err)
if(NOT ranks_rc EQUAL 0)
  message(FATAL_ERROR "mpirun -n 2: exit ${ranks_rc}: ${ranks_err}")
endif()
if(single STREQUAL "")
  message(FATAL_ERROR "single process printed nothing")
endif()
if(NOT ranks STREQUAL single)
  file(WRITE ${SCRATCH}/single.json "${single}")
  file(WRITE ${SCRATCH}/ranks.json "${ranks}")
  message(FATAL_ERROR "stdout differs: ${SCRATCH}/single.json vs ranks.json")
endif()
file(READ ${SCRATCH}/single.csv single_csv)
file(READ ${SCRATCH}/ranks.csv ranks_csv)
if(NOT ranks_csv STREQUAL single_csv)
  message(FATAL_ERROR "CSV differs: ${SCRATCH}/single.csv vs ranks.csv")
endif()
message(STATUS "mpirun -n 2: same bytes as one process")
