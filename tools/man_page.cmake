# cmake -DHELP2MAN=... -DPROGRAM=... -DNAME_LINE=... -DVERSION=... -DOUTPUT=...
#       [-DSTAGE=DIR] -P man_page.cmake
# Writes the man page OUTPUT of PROGRAM from its --help with help2man, then makes it the same
# on every machine: STAGE (where an installed copy of the program was put to run it) becomes
# PREFIX, and bsprun's "(nproc: N here)" (this machine's core count) goes.
execute_process(
  COMMAND ${HELP2MAN} --no-info --section=1 --version-string=${VERSION} "--name=${NAME_LINE}"
          "--source=bspkit ${VERSION}" --output=${OUTPUT}.tmp ${PROGRAM}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "help2man ${PROGRAM} failed (${status})")
endif()
file(READ ${OUTPUT}.tmp page)
if(STAGE)
  file(REAL_PATH ${STAGE} real_stage)
  foreach(dir IN ITEMS "${real_stage}" "${STAGE}")
    string(REPLACE "-" "\\-" escaped "${dir}")  # help2man writes - as \-
    string(REPLACE "${escaped}" "PREFIX" page "${page}")
    string(REPLACE "${dir}" "PREFIX" page "${page}")
  endforeach()
endif()
string(REGEX REPLACE " \\(nproc: [0-9]+ here\\)" " (nproc)" page "${page}")
file(WRITE ${OUTPUT} "${page}")
file(REMOVE ${OUTPUT}.tmp)
