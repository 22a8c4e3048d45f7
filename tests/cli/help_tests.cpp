// `tunelock help TOPIC` and `tunelock completion SHELL`: reference a user
// reads at the terminal, made from what the program accepts.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_run.hpp"
#include "tunelock/base/variables.hpp"
#include "tunelock/decision/modes.hpp"

using tunelock::testing::run_cli;

BOOST_AUTO_TEST_SUITE(help_command)

BOOST_AUTO_TEST_CASE(environment_lists_every_accepted_variable_with_its_default) {
  const auto result = run_cli({"help", "environment"});
  BOOST_TEST_REQUIRE(result.code == 0);
  for (const tunelock::VariableInfo& v : tunelock::documented_variables()) {
    BOOST_TEST(result.out.find("  " + std::string(v.name) + "\n") != std::string::npos, v.name);
    BOOST_TEST(result.out.find("default: " + std::string(v.default_value)) != std::string::npos,
               v.name);
  }
  const auto names = run_cli({"help", "environment", "--names"});
  BOOST_TEST_REQUIRE(names.code == 0);
  std::istringstream lines(names.out);
  std::size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count)
    BOOST_TEST(tunelock::find_variable(line) != nullptr, line);
  BOOST_TEST(count == tunelock::documented_variables().size());
}

BOOST_AUTO_TEST_CASE(modes_says_what_each_mode_times_reads_logs_verifies_and_writes) {
  const auto modes = run_cli({"help", "modes"});
  BOOST_TEST_REQUIRE(modes.code == 0);
  for (const tunelock::ModeBehaviour& m : tunelock::mode_behaviours()) {
    const std::string name(tunelock::to_string(m.mode));
    BOOST_TEST(modes.out.find("\n  " + name + "\n      times: " + std::string(m.times)) !=
                   std::string::npos,
               name);
    BOOST_TEST(modes.out.find("reads a table: " + std::string(m.reads_table) + "; logs choices: " +
                              std::string(m.logs_choices)) != std::string::npos,
               name);
  }
  BOOST_TEST(tunelock::mode_behaviours().size() == 5u);
  // The environment page carries the same table; the documents its Markdown.
  BOOST_TEST(run_cli({"help", "environment"}).out.find(modes.out) != std::string::npos);
  const auto markdown = run_cli({"help", "modes", "--markdown"});
  BOOST_TEST(markdown.out == tunelock::modes_markdown());
  BOOST_TEST(markdown.out.find("| `auto` | yes: the autotuner times") != std::string::npos);
  // The short warning's long story.
  const auto fallback = run_cli({"help", "fallback"});
  BOOST_TEST(fallback.code == 0);
  BOOST_TEST(fallback.out.find("min_cost (default)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(no_topic_lists_the_topics_and_a_bad_one_exits_2) {
  const auto topics = run_cli({"help"});
  BOOST_TEST(topics.code == 0);
  BOOST_TEST(topics.out.find("environment") != std::string::npos);
  BOOST_TEST(topics.out.find("exit-codes") != std::string::npos);
  const auto codes = run_cli({"help", "exit-codes"});
  BOOST_TEST(codes.code == 0);
  BOOST_TEST(codes.out.find("3   no tuned config") != std::string::npos);
  const auto bad = run_cli({"help", "enviroment"});
  BOOST_TEST(bad.code == 2);
  BOOST_TEST(bad.out.empty());
  BOOST_TEST(
      bad.err ==
      "tunelock: help: no topic 'enviroment'; topics: environment, modes, fallback, exit-codes\n");
}

BOOST_AUTO_TEST_CASE(the_bash_script_names_every_command_and_its_flags) {
  const auto script = run_cli({"completion", "bash"});
  BOOST_TEST_REQUIRE(script.code == 0);
  BOOST_TEST(script.out.find("complete -o filenames -F _tunelock tunelock") != std::string::npos);
  for (const char* arm :
       {"'/table/show') words='--help -h --json", "'/merge') words='--help -h --output -o",
        "'/watch/compare') words='", "'/help') words='--help -h --names"})
    BOOST_TEST(script.out.find(arm) != std::string::npos, arm);
  // The root lists the commands, completion itself included.
  BOOST_TEST(script.out.find("'') words='choose policy table merge") != std::string::npos);
  BOOST_TEST(script.out.find(" completion") != std::string::npos);
  const auto zsh = run_cli({"completion", "zsh"});
  BOOST_TEST(zsh.code == 0);
  BOOST_TEST(zsh.out.find("bashcompinit") != std::string::npos);
  const auto fish = run_cli({"completion", "fish"});
  BOOST_TEST(fish.code == 2);
  BOOST_TEST(fish.err == "tunelock: completion: no shell 'fish'; shells: bash, zsh\n");
}

BOOST_AUTO_TEST_CASE(output_writes_the_script_and_names_an_unwritable_place) {
  const auto dir = std::filesystem::temp_directory_path() / "tunelock-completion-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto file = dir / "tunelock.bash";
  const auto written = run_cli({"completion", "bash", "--output", file.string()});
  BOOST_TEST(written.code == 0);
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  BOOST_TEST(text.str() == run_cli({"completion", "bash"}).out);
  const auto nowhere =
      run_cli({"completion", "bash", "--output", (file / "x").string()});  // under a file
  BOOST_TEST(nowhere.code == 2);
  BOOST_TEST(nowhere.err.find((file / "x").string()) != std::string::npos);
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
