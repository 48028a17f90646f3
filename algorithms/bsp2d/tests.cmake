# The tests of BSP2D (test_bsp2d.c), read by tests/algorithms/CMakeLists.txt where bsprun,
# expect_failure.sh and the back ends under test are known: every case on every back end at
# every grid shape, bsp2d.<case>.<RxC>.<backend>.p<P>. The quick tier runs every case on the
# grid 1x3 on threads; the sanitizer suites every case on the grids of BSP2D_SMOKE_GRIDS (the
# other grids are labelled "sweep").
bspkit_test_executable(test_bsp2d ${CMAKE_CURRENT_LIST_DIR}/test_bsp2d.c)
target_include_directories(test_bsp2d PRIVATE ${PROJECT_SOURCE_DIR}/tests/semantics)
target_link_libraries(test_bsp2d PRIVATE bsp2d m)

set(BSP2D_TEST_GRIDS 1x1 1x2 2x1 1x3 3x1 2x2 1x4 4x1 2x3 3x2)
set(BSP2D_SMOKE_GRIDS 1x3 2x2)
foreach(backend IN LISTS BSPKIT_TEST_BACKENDS)
  foreach(grid IN LISTS BSP2D_TEST_GRIDS)
    string(REPLACE "x" ";" dims ${grid})
    list(GET dims 0 rows)
    list(GET dims 1 cols)
    math(EXPR p "${rows} * ${cols}")
    foreach(case IN ITEMS grid maps buffers messages bcast allreduce hooks)
      set(test bsp2d.${case}.${grid}.${backend}.p${p})
      add_test(NAME ${test}
               COMMAND ${BSPRUN} -b ${backend} -n ${p} $<TARGET_FILE:test_bsp2d> --grid ${grid} ${case})
      set_tests_properties(${test} PROPERTIES TIMEOUT 60 LABELS "bsp;algorithms;bsp2d;${backend}")
      if(NOT grid IN_LIST BSP2D_SMOKE_GRIDS)
        set_property(TEST ${test} APPEND PROPERTY LABELS sweep)
      elseif(grid STREQUAL "1x3" AND backend STREQUAL "threads")
        set_property(TEST ${test} APPEND PROPERTY LABELS quick)
      endif()
    endforeach()
  endforeach()
  # A grid whose shape does not match the processes ends the program with the numbers.
  set(test bsp2d.grid-mismatch.3x1.${backend}.p2)
  add_test(NAME ${test}
           COMMAND ${EXPECT_FAILURE} 30 1
                   "bsp2d_grid_create: a 3 x 1 grid needs 3 processes, but there are 2"
                   ${BSPRUN} -b ${backend} -n 2 $<TARGET_FILE:test_bsp2d> --grid 3x1 grid)
  set_tests_properties(${test} PROPERTIES TIMEOUT 40 LABELS "algorithms;errors;bsp2d;${backend}")
endforeach()
