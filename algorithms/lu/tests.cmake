# bspalg-lu: ||P A - L U||_1 / (n ||A||_1 eps) <= 10 on every back end (helpers:
# tests/algorithms/CMakeLists.txt). The default grid is the one closest to square (1 x p, 2 x 2);
# the other shapes name their p. Sizes divide neither nb nor the grid unless said.
bspalg_test(n97.nb8 ARGS --size 97 --nb 8 -r 2)
bspalg_test(n64.nb16.divisible ARGS --size 64 --nb 16 -r 1)
bspalg_test(n1 ARGS --size 1 --nb 4 -r 1)
bspalg_test(nb.over.n ARGS --size 10 --nb 16 -r 1)
bspalg_test(nb1.unblocked ARGS --size 33 --nb 1 -r 1)
bspalg_test(grid2x1.n61.nb5 ARGS --grid 2x1 --size 61 --nb 5 -r 2 --seed 3 PROCS 2)
bspalg_test(grid3x1.n50.nb4 ARGS --grid 3x1 --size 50 --nb 4 -r 1 PROCS 3)
bspalg_test(grid4x1.n70.nb6 ARGS --grid 4x1 --size 70 --nb 6 -r 1 PROCS 4)
bspalg_test(grid1x4.n70.nb6 ARGS --grid 1x4 --size 70 --nb 6 -r 1 PROCS 4)
bspalg_test(grid2x2.n150.nb7 ARGS --grid 2x2 --size 150 --nb 7 -r 2 --seed 5 PROCS 4)
# More processes than blocks in a dimension: some own no rows or no columns.
bspalg_test(grid4x1.fewer.blocks ARGS --grid 4x1 --size 9 --nb 4 -r 1 PROCS 4)
# The algorithmic block size nb' = 2 nb and 4 nb (--nb-alg): the panel factored by the process
# columns that hold it, the trailing update once per nb' columns (n = 97 leaves a last block of
# 2 columns); at p = 1, the 2 x 2 grid and the non-square 2 x 3 (nb' = nb there too).
bspalg_test(nbalg2.n97.nb5 ARGS --size 97 --nb 5 --nb-alg 10 -r 1 PROCS 1 4)
bspalg_test(nbalg4.n97.nb5 ARGS --size 97 --nb 5 --nb-alg 20 -r 1 PROCS 1 4)
foreach(factor IN ITEMS 1 2 4)
  math(EXPR nb_alg "5 * ${factor}")
  bspalg_test(grid2x3.nbalg${factor}.n97.nb5 ARGS --grid 2x3 --size 97 --nb 5 --nb-alg ${nb_alg} -r 1 PROCS 6)
endforeach()

# A singular matrix (column J zero) ends with exit status 1 and one line naming the column, on
# every back end, at each grid shape: the panel of a 1 x N grid is LAPACK's dgetrf, of M > 1
# the distributed pivot search.
foreach(backend IN LISTS BSPKIT_TEST_BACKENDS)
  foreach(shape IN ITEMS 1:1x1 2:1x2 2:2x1 3:3x1 4:2x2)
    string(REPLACE ":" ";" parts ${shape})
    list(GET parts 0 p)
    list(GET parts 1 grid)
    foreach(column IN ITEMS 0 13 49)
      set(test alg.lu.singular.col${column}.${grid}.${backend}.p${p})
      add_test(NAME ${test}
               COMMAND ${EXPECT_FAILURE} 30 1
                       "bspalg-lu: the matrix is singular: column ${column} has no pivot"
                       ${BSPRUN} -b ${backend} -n ${p} $<TARGET_FILE:bspalg-lu> --size 50 --nb 8
                       --grid ${grid} --singular-column ${column} -r 2)
      set_tests_properties(${test} PROPERTIES TIMEOUT 40 LABELS "algorithms;errors;lu;${backend}")
      if(NOT grid STREQUAL "2x2") # the distributed pivot search of M > 1 is the smoke case
        set_property(TEST ${test} APPEND PROPERTY LABELS sweep)
      endif()
    endforeach()
  endforeach()
endforeach()

bspalg_error_test(grid-mismatch EXPECT "--grid 3x1 needs 3 processes, not 2" ARGS --grid 3x1)
bspalg_error_test(grid-syntax EXPECT "--grid must be RxC with R, C >= 1 \\(e.g. 2x1\\), not '2by1'"
                  ARGS --grid 2by1)
bspalg_error_test(nb-alg-multiple EXPECT "--nb-alg 12 must be a multiple of --nb 8"
                  ARGS --nb 8 --nb-alg 12)
bspalg_error_test(singular-column-outside EXPECT "--singular-column 60 is not a column of a 50 x 50 matrix"
                  ARGS --size 50 --singular-column 60)

# Killed halfway and restarted from its checkpoints (one at the last sync of every stage): the
# result of an uninterrupted run, bit for bit. 1 x P grids (the panel broadcast ends a stage),
# and P x 1 (the U broadcast ends it, after the pivot supersteps and the row swaps).
bspalg_restart_test(n97.nb16 KILL last ARGS --size 97 --nb 16 -r 2)
bspalg_restart_test(grid2x1 ARGS --grid 2x1 --size 61 --nb 10 -r 2 PROCS 2)
bspalg_restart_test(grid3x1 KILL 0 ARGS --grid 3x1 --size 50 --nb 8 -r 2 PROCS 3)
