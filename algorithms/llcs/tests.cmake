# LLCS (bspalg-llcs) against the sequential references, both kernels: lengths 1, below /
# above a word (63, 65), not multiples of 64 or of G, m != n both ways, grids finer than
# the strings (empty blocks), alphabets 1, 2, 4, 256, alpha given and chosen.
# Small: the check uses the sequential DP up to 5e7 cells, the bit-parallel one beyond.
bspalg_add_test(NAME llcs.dp.n1 DRIVER bspalg-llcs LABELS llcs
                ARGS --kernel dp --size 1 --alphabet 1 -r 1)
bspalg_add_test(NAME llcs.dp.uneven DRIVER bspalg-llcs LABELS llcs
                ARGS --kernel dp --sizes 1000,3001 --alphabet 4 --alpha 3 -r 2 --seed 3)
bspalg_add_test(NAME llcs.dp.tiny-blocks DRIVER bspalg-llcs LABELS llcs
                ARGS --kernel dp --sizes 65,63 --alphabet 256 --alpha 5 -r 2 --seed 5)
# 8000 x 7001 = 5.6e7 cells: checked against the sequential bit-parallel algorithm
bspalg_add_test(NAME llcs.dp.bitpar-checked DRIVER bspalg-llcs LABELS llcs
                ARGS --kernel dp --sizes 8000,7001 --alphabet 2 -r 1 --seed 9)
bspalg_add_test(NAME llcs.bitpar.n1 DRIVER bspalg-llcs LABELS llcs
                ARGS --kernel bitpar --size 1 --alphabet 2 -r 1)
bspalg_add_test(NAME llcs.bitpar.uneven DRIVER bspalg-llcs LABELS llcs
                ARGS --kernel bitpar --sizes 3001,1000 --alphabet 4 --alpha 2 -r 2 --seed 4 --measure-f)
bspalg_add_test(NAME llcs.bitpar.alphabet256 DRIVER bspalg-llcs LABELS llcs
                ARGS --kernel bitpar --sizes 4097,200 --alphabet 256 --alpha 5 -r 2 --seed 6)
bspalg_add_test(NAME llcs.bitpar.alphabet1 DRIVER bspalg-llcs LABELS llcs
                ARGS --kernel bitpar --sizes 1000,63 --alphabet 1 -r 2)
# 20000 x 12001 = 2.4e8 cells, default alpha: checked against the sequential bit-parallel one
bspalg_add_test(NAME llcs.bitpar.medium DRIVER bspalg-llcs LABELS llcs
                ARGS --kernel bitpar --sizes 20000,12001 --alphabet 4 -r 2 --seed 8)

add_test(NAME alg.llcs.bad-alphabet COMMAND ${EXPECT_FAILURE} 10 2 "--alphabet must be an integer from 1 to 256"
         ${BSPRUN} -n 2 $<TARGET_FILE:bspalg-llcs> --alphabet 257)
add_test(NAME alg.llcs.bad-kernel COMMAND ${EXPECT_FAILURE} 10 2 "--kernel must be dp or bitpar, not 'simd'"
         ${BSPRUN} -n 2 $<TARGET_FILE:bspalg-llcs> --kernel simd)
add_test(NAME alg.llcs.bad-sizes COMMAND ${EXPECT_FAILURE} 10 2 "--sizes must be M,N"
         ${BSPRUN} -n 2 $<TARGET_FILE:bspalg-llcs> --sizes 100)
add_test(NAME alg.llcs.bad-alpha COMMAND ${EXPECT_FAILURE} 10 2 "--alpha must be an integer from 1"
         ${BSPRUN} -n 2 $<TARGET_FILE:bspalg-llcs> --alpha 0)
set_tests_properties(alg.llcs.bad-alphabet alg.llcs.bad-kernel alg.llcs.bad-sizes alg.llcs.bad-alpha
                     PROPERTIES LABELS "algorithms;errors;llcs" TIMEOUT 30)
