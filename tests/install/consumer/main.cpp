// Installs the policy from the environment, makes one pinned choice, and
// prints the choice and the digest; the choice log is written at exit.
#include <iostream>

#include <tunelock/runtime.hpp>

int main() {
  tunelock::install_from_environment();
  const std::vector<tunelock::Config> candidates{tunelock::make_config({{"BLOCK_M", 128}}, 8, 3),
                                                 tunelock::make_config({{"BLOCK_M", 32}}, 4, 2)};
  auto& runtime = tunelock::process_runtime();
  const auto choice = runtime.pinned_choice("host", {"consumer.ops", "matmul"}, "M=64", candidates);
  std::cout << tunelock::signature(candidates[choice.index]) << " "
            << tunelock::to_string(choice.reason) << " " << runtime.choice_digest() << "\n";
}
