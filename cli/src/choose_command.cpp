// `tunelock choose`: one pinned decision, offline, from the tables given on
// the command line only (no environment, no installed tables), so the
// answer depends on nothing but the arguments.
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/decision/decision.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/decision/selection.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/model/candidates.hpp"
#include "tunelock/tables/table_files.hpp"
#include "tunelock/tables/table_format.hpp"

namespace tunelock::cli {
namespace {

struct ChooseOptions {
  std::string candidates;
  std::string kernel;
  std::string key;
  std::vector<std::string> tables;
  std::string arch;
  std::string on_miss;  // empty: the environment's (TUNELOCK_ON_MISS), else min_cost
  std::vector<std::string> blocks;
  bool chaos = false;
  std::int64_t rank = 0;
  bool rank_given = false;
  bool json = false;
  bool explain = false;
};

// The arch to decide for: --arch, else the arch of the first table file
// named directly. Directories alone cannot tell, so they need --arch.
std::string resolve_arch(const ChooseOptions& options) {
  if (!options.arch.empty()) {
    check_arch_name(options.arch, "--arch");
    return options.arch;
  }
  for (const std::string& path : options.tables) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      throw Error("--table " + path +
                  " is a directory: give --arch so tunelock knows which "
                  "<arch>.tlb/<arch>.json to look for");
    }
    return std::string(load_table_file(path)->arch());
  }
  return "unknown";
}

std::vector<BlockSize> block_sizes_from(const std::vector<std::string>& flags) {
  std::vector<BlockSize> block_sizes;
  for (const std::string& flag : flags) {
    auto parsed = parse_block_sizes(flag, "--block");
    block_sizes.insert(block_sizes.end(), parsed.begin(), parsed.end());
  }
  validate_block_sizes(block_sizes);
  return block_sizes;
}

// The decision in words: every candidate with its cost, what each rule
// found (lines written by the rules themselves), and the outcome.
void print_explanation(const ChooseOptions& options, const std::string& arch,
                       const std::vector<Config>& candidates,
                       const std::vector<std::string>& explanation, const Choice& choice,
                       std::ostream& out) {
  out << options.kernel << " [" << options.key << "] on " << arch << ", " << candidates.size()
      << " candidate(s); cost = (BLOCK* product x max(stages,1), max(warps,1)), lower is "
         "cheaper:\n";
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Cost cost = estimate_cost(candidates[i]);
    out << "  [" << i << "] " << signature(candidates[i]) << "  cost (" << cost.block << ", "
        << cost.warps << ")" << (i == choice.index ? "  <- chosen" : "") << "\n";
  }
  out << "rules, in order:\n";
  for (const std::string& line : explanation) out << "  " << line << "\n";
  out << "decision: candidate " << choice.index << " " << signature(candidates[choice.index])
      << " (" << to_string(choice.reason) << ")\n";
}

int choose(const ChooseOptions& options, Streams& streams) {
  const CandidateManifest manifest =
      candidates_from_json(read_file(options.candidates), options.candidates);
  // A bare name unique in the manifest stands for its qualified name.
  const std::string qualified = manifest.resolve(options.kernel, options.candidates);
  const KernelCandidates& kernel = manifest.find(qualified, options.candidates);
  const std::vector<Config>& candidates = kernel.configs;
  const std::string arch = resolve_arch(options);
  // The policy as a run would resolve it (unknown TUNELOCK_* variables are
  // refused here too), with the flags on top: block sizes, on_miss and the
  // configs declared nondeterministic. Tables come from --table only.
  const Policy environment = policy_from_environment(streams.env);
  const std::vector<BlockSize> block_sizes =
      options.blocks.empty() ? environment.block_sizes : block_sizes_from(options.blocks);

  DecisionRequest request;
  request.arch = arch;
  request.kernel = KernelId::parse(qualified);
  request.key = options.key;
  request.candidates = candidates;
  request.block_sizes = block_sizes;
  request.on_miss =
      options.on_miss.empty() ? environment.on_miss : parse_on_miss(options.on_miss, "--on-miss");
  request.declared_nondeterministic = environment.nondeterministic;
  request.chaos_rank = chaos_rank_of(
      options.chaos, options.rank_given ? std::optional<std::int64_t>(options.rank) : std::nullopt,
      "--chaos", "--rank");
  request.explain = options.explain;
  // The chaos control ignores the table, so it needs none.
  std::unique_ptr<Table> table;
  if (!request.chaos_rank) {
    table = load_table_for_arch(arch, options.tables, false);
    if (!table && !options.tables.empty())
      logger().warn("no table for {} among the --table arguments ({})", arch,
                    table_search_text(options.tables, false));
  }
  request.table = table.get();
  request.notices = &process_notices();  // warnings go to the log, as a run's do
  request.collect_warnings = false;
  // A key that is not the kernel's would silently take the table's '*' entry.
  check_key_names(kernel, options.key, "--key");
  const Decision decision = make_decision(request);
  const Choice& choice = decision.choice;
  const std::vector<std::string>& explanation = decision.explanation;

  const std::string chosen = signature(candidates[choice.index]);
  if (options.json) {
    nlohmann::ordered_json out = {{"index", choice.index},
                                  {"signature", chosen},
                                  {"reason", std::string(to_string(choice.reason))}};
    if (options.explain) out["explanation"] = explanation;
    streams.out << out.dump() << "\n";
  } else if (options.explain) {
    print_explanation(options, arch, candidates, explanation, choice, streams.out);
  } else {
    streams.out << options.kernel << " [" << options.key << "] on " << arch << ": candidate "
                << choice.index << " " << chosen << " (" << to_string(choice.reason) << ")\n";
  }
  return 0;
}

}  // namespace

Command add_choose_command(CLI::App& app) {
  auto options = std::make_shared<ChooseOptions>();
  CLI::App* cmd = app.add_subcommand(
      "choose", "Decide one kernel call's config without a clock: table, block sizes, on_miss");
  cmd->add_option("--candidates", options->candidates,
                  "Candidate file: {\"configs\": [...]} or a candidate manifest")
      ->required();
  cmd->add_option("--kernel", options->kernel, "Qualified kernel name (module.name)")->required();
  cmd->add_option("--key", options->key, "Tuning key, e.g. 'M=4096|torch.bfloat16'")->required();
  cmd->add_option("--table", options->tables,
                  "Table file, or directory searched for <arch>.tlb/<arch>.json (repeatable)");
  cmd->add_option("--arch", options->arch, "Architecture tag, e.g. sm90 (default: the table's)");
  cmd->add_option("--on-miss", options->on_miss,
                  "What a miss does (default: TUNELOCK_ON_MISS, else min_cost)")
      ->check(CLI::IsMember({"min_cost", "error"}));
  cmd->add_option("--block", options->blocks,
                  "Block-size override NAME=INT (repeatable; default: TUNELOCK_BLOCK*)");
  cmd->add_flag("--chaos", options->chaos, "Positive control: a deliberately rank-dependent pick");
  cmd->add_option_function<std::int64_t>(
      "--rank",
      [options](std::int64_t rank) {
        options->rank = rank;
        options->rank_given = true;
      },
      "This rank's number, for --chaos");
  cmd->add_flag("--explain", options->explain,
                "Explain the decision: every candidate's cost and what each rule found");
  cmd->add_flag("--json", options->json,
                "Print {\"index\", \"signature\", \"reason\"} as one JSON object");
  return {cmd, [options](Streams& streams) { return choose(*options, streams); }};
}

}  // namespace tunelock::cli
