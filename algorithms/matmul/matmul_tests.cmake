# Matrix multiplication against the sequential triple loop (every process checks its part of C),
# at p = 1..4 on every back end. Sizes are chosen so that nothing divides evenly: n = 37, 50 and
# 101 are not multiples of q^(1/3) nor of the grid's sides, and n = 5 with q = 64 (s = 2) leaves
# the last block row and column empty.

# memory-efficient algorithm, customized block-cyclic distribution
bspalg_add_test(NAME matmul.blockcyclic.q1.n37 DRIVER bspalg-matmul ARGS --dist blockcyclic --q 1 --size 37 -r 1)
bspalg_add_test(NAME matmul.blockcyclic.q8.n50 DRIVER bspalg-matmul ARGS --dist blockcyclic --q 8 --size 50 -r 2 --seed 3)
bspalg_add_test(NAME matmul.blockcyclic.q27.n101 DRIVER bspalg-matmul ARGS --dist blockcyclic --q 27 --size 101 -r 1)
bspalg_add_test(NAME matmul.blockcyclic.q64.n5 DRIVER bspalg-matmul ARGS --dist blockcyclic --q 64 --size 5 -r 1)
# static 2D distribution, rows fetched with hpget
bspalg_add_test(NAME matmul.static2d.q1.n37 DRIVER bspalg-matmul ARGS --dist static2d --q 1 --size 37 -r 1)
bspalg_add_test(NAME matmul.static2d.q8.n101 DRIVER bspalg-matmul ARGS --dist static2d --q 8 --size 101 -r 2 --seed 5)
bspalg_add_test(NAME matmul.static2d.q27.n50 DRIVER bspalg-matmul ARGS --dist static2d --q 27 --size 50 -r 1)
bspalg_add_test(NAME matmul.static2d.q64.n37 DRIVER bspalg-matmul ARGS --dist static2d --q 64 --size 37 -r 1)

if(TARGET bspalg-cannon)
  # Cannon-style MatMul (put) and MatMulG (get) on the grid closest to square (1 x 2, 1 x 3, 2 x 2)
  bspalg_add_test(NAME cannon.put.n37 DRIVER bspalg-cannon ARGS --variant put --size 37 -r 2)
  bspalg_add_test(NAME cannon.get.n50 DRIVER bspalg-cannon ARGS --variant get --size 50 -r 2 --seed 9)
  bspalg_add_test(NAME cannon.put.n3 DRIVER bspalg-cannon ARGS --variant put --size 3 -r 1)
  add_test(NAME alg.cannon.bad-variant COMMAND ${EXPECT_FAILURE} 10 2 "--variant must be put or get, not 'send'"
           ${BSPRUN} -n 2 $<TARGET_FILE:bspalg-cannon> --variant send)
  set_tests_properties(alg.cannon.bad-variant PROPERTIES LABELS "algorithms;errors" TIMEOUT 30)
endif()

# bad arguments: exit status 2 and a message
add_test(NAME alg.matmul.bad-q COMMAND ${EXPECT_FAILURE} 10 2 "--q must be a perfect cube .*not 10"
         ${BSPRUN} -n 2 $<TARGET_FILE:bspalg-matmul> --q 10)
add_test(NAME alg.matmul.bad-dist COMMAND ${EXPECT_FAILURE} 10 2 "--dist must be blockcyclic or static2d, not 'cyclic'"
         ${BSPRUN} -n 2 $<TARGET_FILE:bspalg-matmul> --dist cyclic)
add_test(NAME alg.matmul.bad-size COMMAND ${EXPECT_FAILURE} 10 2 "--size must be an integer from 1"
         ${BSPRUN} -n 2 $<TARGET_FILE:bspalg-matmul> --size -4)
add_test(NAME alg.matmul.too-large COMMAND ${EXPECT_FAILURE} 30 2 "over the BSPlib limit"
         ${BSPRUN} -n 1 $<TARGET_FILE:bspalg-matmul> --size 20000 --q 1 --no-check)
set_tests_properties(alg.matmul.bad-q alg.matmul.bad-dist alg.matmul.bad-size alg.matmul.too-large
                     PROPERTIES LABELS "algorithms;errors" TIMEOUT 30)
