// One pinned choice through the engine alone, as an offline tool would make it.
#include <iostream>

#include <tunelock/runtime/runtime.hpp>

int main() {
  tunelock::install_from_environment();
  const std::vector<tunelock::Config> candidates{tunelock::make_config({{"BLOCK_M", 128}}, 8, 3),
                                                 tunelock::make_config({{"BLOCK_M", 32}}, 4, 2)};
  const auto choice = tunelock::process_runtime().pinned_choice("host", {"consumer.ops", "matmul"},
                                                                "M=64", candidates);
  std::cout << tunelock::signature(candidates[choice.index]) << " "
            << tunelock::to_string(choice.reason) << "\n";
}
