# bspalg-lu against ||P A - L U||_1 / (n ||A||_1 eps) <= 10 (helpers: tests/algorithms/CMakeLists.txt).
bspalg_test(n97.nb8 ARGS --size 97 --nb 8 -r 2)
