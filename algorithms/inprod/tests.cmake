# Inner product: lengths below, equal to and not a multiple of p.
bspalg_add_test(NAME inprod.n1 DRIVER bspalg-inprod ARGS --size 1 -r 2)
bspalg_add_test(NAME inprod.n1001 DRIVER bspalg-inprod ARGS --size 1001 -r 2 --seed 7)
add_test(NAME alg.inprod.bad-size COMMAND ${EXPECT_FAILURE} 10 2 "--size must be an integer from 1"
         ${BSPRUN} -n 2 $<TARGET_FILE:bspalg-inprod> --size 0)
add_test(NAME alg.inprod.bad-option COMMAND ${EXPECT_FAILURE} 10 2 "unknown option or missing value: '--frobnicate'"
         ${BSPRUN} -n 2 $<TARGET_FILE:bspalg-inprod> --frobnicate)
set_tests_properties(alg.inprod.bad-size alg.inprod.bad-option PROPERTIES LABELS "algorithms;errors" TIMEOUT 30)
