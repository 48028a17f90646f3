# bspalg-rdxsort against the checks of its driver (every block in order, the blocks in order,
# the output a permutation of the input) and, up to 2^22 keys, key for key against qsort
# (helpers: tests/algorithms/CMakeLists.txt). Every variant; sizes below p, not divisible by
# p; every key distribution; digits that do not divide the key (11 bits: 11 + 11 + 10); 64-bit
# keys; both primitives.
bspalg_test(plain.n1 ARGS --size 1 -r 1)
bspalg_test(plain.n3 ARGS --size 3 -r 2 --seed 3)
bspalg_test(plain.uneven ARGS --size 100003 -r 2 --seed 5)
bspalg_test(plain.bits11 ARGS --size 50001 --bits 11 -r 2 --measure-f)
bspalg_test(plain.bits1.hpput ARGS --size 2001 --bits 1 --primitive hpput -r 1)
bspalg_test(plain.key64 ARGS --size 30001 --key-bits 64 --bits 16 -r 1)
bspalg_test(plain.equal ARGS --size 10007 --dist equal -r 2)
bspalg_test(plain.sorted ARGS --size 10007 --dist sorted -r 2)
bspalg_test(opt.uneven ARGS --variant opt --size 100003 -r 2 --seed 7)
bspalg_test(opt.zipf ARGS --variant opt --size 40009 --dist zipf --bits 5 -r 2)
bspalg_test(opt.n2 ARGS --variant opt --size 2 -r 1)
bspalg_test(combined.uneven ARGS --variant combined --size 100003 -r 2 --seed 9)
bspalg_test(combined.n3 ARGS --variant combined --size 3 -r 2)
bspalg_test(combined.few-distinct ARGS --variant combined --size 20011 --dist few-distinct -r 2)
bspalg_test(combined.key64.put ARGS --variant combined --size 20011 --key-bits 64 --primitive put -r 2)
bspalg_test(combined.zipf ARGS --variant combined --size 50021 --dist zipf --bits 11 -r 2)

bspalg_error_test(bad-size EXPECT "--size must be an integer from 1" ARGS --size 0)
bspalg_error_test(bad-variant EXPECT "--variant must be plain, opt or combined, not 'fast'" ARGS --variant fast)
bspalg_error_test(bad-bits EXPECT "--bits must be an integer from 1 to 16" ARGS --bits 17)
bspalg_error_test(bad-key-bits EXPECT "--key-bits must be 32 or 64, not '16'" ARGS --key-bits 16)
bspalg_error_test(bad-dist EXPECT "--dist must be uniform, zipf, sorted, few-distinct or equal, not 'normal'" ARGS --dist normal)
bspalg_error_test(bad-primitive EXPECT "--primitive must be put or hpput, not 'get'" ARGS --primitive get)

# Killed halfway and restarted from its checkpoints (one after every round): the result of an
# uninterrupted run, bit for bit; combined keeps the most across a round (the staged pieces).
bspalg_restart_test(combined KILL last ARGS --variant combined --size 10001 -r 2)
# The skeleton's --checkpoint-every: the driver's interval in place of bsprun's (0: every round;
# 1h: none in this run).
add_test(NAME alg.rdxsort.checkpoint-every
         COMMAND sh ${BSPALG_CHECKPOINT_EVERY} ${BSPRUN} $<TARGET_FILE:bspalg-rdxsort> --size 1001 -r 1)
set_tests_properties(alg.rdxsort.checkpoint-every PROPERTIES TIMEOUT 60 LABELS "algorithms;checkpoint;rdxsort")
