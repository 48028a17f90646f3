# BSPKIT_SANITIZE=address (ASan+UBSan) or thread (TSan): instruments everything built here.
# BSPKIT_SANITIZE_FLAGS holds the flags for what is compiled outside this build (the tool and
# install tests compile programs against the instrumented libbsp.a and need the same runtime).
set(BSPKIT_SANITIZE "" CACHE STRING "Sanitizer build: '', 'address' or 'thread'")
if(BSPKIT_SANITIZE STREQUAL "address")
  set(BSPKIT_SANITIZE_FLAGS -fsanitize=address,undefined)
  add_compile_options(${BSPKIT_SANITIZE_FLAGS} -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g)
elseif(BSPKIT_SANITIZE STREQUAL "thread")
  set(BSPKIT_SANITIZE_FLAGS -fsanitize=thread)
  add_compile_options(${BSPKIT_SANITIZE_FLAGS} -fno-omit-frame-pointer -g)
elseif(BSPKIT_SANITIZE STREQUAL "")
  set(BSPKIT_SANITIZE_FLAGS "")
else()
  message(FATAL_ERROR "BSPKIT_SANITIZE must be '', 'address' or 'thread', not '${BSPKIT_SANITIZE}'")
endif()
add_link_options(${BSPKIT_SANITIZE_FLAGS})
