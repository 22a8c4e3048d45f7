# -Wall -Wextra on project code only; third-party headers come in as system
# includes through their imported targets. Warnings become errors only where
# asked (the presets and CI): a user's compiler, with its own false positives
# (GCC 12's -Wrestrict at -O3), must never break their build.
option(TUNELOCK_WARNINGS_AS_ERRORS "Treat warnings in project code as errors" OFF)

function(tunelock_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor>)
  if(TUNELOCK_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()
