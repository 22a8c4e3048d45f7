# Warnings are errors on project code only; third-party headers come in as
# system includes through their imported targets.
function(tunelock_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror -Wshadow -Wnon-virtual-dtor>)
endfunction()
