// Installs the policy from the environment, makes one pinned choice through
// the engine and one call of a host kernel family through the launcher, and
// prints both choices and the digest; the choice log is written at exit.
#include <iostream>

#include <tunelock/launcher/host_backend.hpp>
#include <tunelock/launcher/kernel_family.hpp>
#include <tunelock/runtime/runtime.hpp>

int main() {
  tunelock::install_from_environment();
  const std::vector<tunelock::Config> candidates{tunelock::make_config({{"BLOCK_M", 128}}, 8, 3),
                                                 tunelock::make_config({{"BLOCK_M", 32}}, 4, 2)};
  auto& runtime = tunelock::process_runtime();
  const auto choice = runtime.pinned_choice("host", {"consumer.ops", "matmul"}, "M=64", candidates);

  // A trainer's view of the launcher: a host family whose variants say which ran.
  tunelock::launcher::HostBackend host;
  tunelock::launcher::Launcher launcher(host, runtime);
  int ran = 0;
  tunelock::launcher::KernelFamily<int*> scale(
      launcher, {"consumer.ops", "scale"}, {"N"},
      {{tunelock::make_config({{"BLOCK", 256}}, 4, 2), [](int* out) { *out = 256; }},
       {tunelock::make_config({{"BLOCK", 64}}, 4, 2), [](int* out) { *out = 64; }}});
  scale({std::int64_t{1024}}, {"f32"}, &ran);

  std::cout << tunelock::signature(candidates[choice.index]) << " "
            << tunelock::to_string(choice.reason) << " ran BLOCK=" << ran << " "
            << runtime.choice_digest() << "\n";
}
