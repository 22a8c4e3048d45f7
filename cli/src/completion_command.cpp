// `tunelock completion bash|zsh`: a completion script made from the
// commands and options this program registers, so it never lists a flag
// that is gone. The build writes it beside the program (tunelock.bash) and
// `cmake --install` puts it where bash-completion looks for it.
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/decision/modes.hpp"
#include "tunelock/io/files.hpp"

namespace tunelock::cli {
namespace {

std::string options_of(const CLI::App& app) {
  std::string out;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) out += " --" + name;
    for (const std::string& name : option->get_snames()) out += " -" + name;
  }
  return out;
}

// One `case` arm per command path: "/table/show) words='...'; leaf=1 ;;".
void arms(const CLI::App& app, const std::string& path, std::string& paths, std::string& words) {
  std::string subcommands;
  for (const CLI::App* sub : app.get_subcommands({})) {
    subcommands += " " + sub->get_name();
    const std::string child = path + "/" + sub->get_name();
    paths += (paths.empty() ? "" : "|") + child;
    arms(*sub, child, paths, words);
  }
  const std::string all = subcommands + options_of(app);
  words += "    '" + path + "') words='" + all.substr(all.empty() ? 0 : 1) +
           "'; leaf=" + (subcommands.empty() ? "1" : "0") + " ;;\n";
}

// The values an option or a command's argument takes, from the tables that
// define them (the modes, the on-miss rules, the help topics), so Tab offers
// what the parser accepts.
std::string value_arms() {
  std::string modes;
  for (const ModeBehaviour& m : mode_behaviours()) modes += " " + std::string(to_string(m.mode));
  std::string topics;
  for (std::string_view t : help_topics()) topics += " " + std::string(t);
  return "    --mode) values='" + modes.substr(1) + "' ;;\n" + "    --on-miss) values='" +
         std::string(to_string(OnMiss::min_cost)) + " " + std::string(to_string(OnMiss::error)) +
         "' ;;\n" + "    --equivalent) values='" + std::string(to_string(Equivalent::off)) + " " +
         std::string(to_string(Equivalent::timed)) + "' ;;\n" +
         "    --provenance|--identity) values='warn strict ignore' ;;\n" +
         "    *) [[ $path == /help && $leaf == 1 ]] && values='" + topics.substr(1) + "' ;;\n";
}

std::string bash_script(const CLI::App& root) {
  std::string paths, words;
  arms(root, "", paths, words);
  std::ostringstream s;
  s << "# bash completion for tunelock, made by `tunelock completion bash`.\n"
       "_tunelock() {\n"
       "  local cur=${COMP_WORDS[COMP_CWORD]} path= word i words= leaf=0\n"
       "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
       "    word=${COMP_WORDS[i]}\n"
       "    if [[ $word == -- ]]; then\n"
       "      # What follows is a command line of its own (launch, watch).\n"
       "      if ((i == COMP_CWORD - 1)); then COMPREPLY=($(compgen -c -- \"$cur\"));\n"
       "      else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n"
       "      return 0\n"
       "    fi\n"
       "    case \"$path/$word\" in\n"
       "      "
    << paths
    << ") path=$path/$word ;;\n"
       "    esac\n"
       "  done\n"
       "  case \"$path\" in\n"
    << words
    << "  esac\n"
       "  # An option's value, or help's topic.\n"
       "  local prev=${COMP_WORDS[COMP_CWORD-1]} values=\n"
       "  case \"$prev\" in\n"
    << value_arms()
    << "  esac\n"
       "  if [[ -n $values && $cur != -* ]]; then\n"
       "    COMPREPLY=($(compgen -W \"$values\" -- \"$cur\"))\n"
       "    return 0\n"
       "  fi\n"
       "  if [[ $leaf == 1 && $cur != -* ]]; then\n"
       "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
       "  else\n"
       "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
       "  fi\n"
       "}\n"
       "complete -o filenames -F _tunelock tunelock\n";
  return s.str();
}

}  // namespace

Command add_completion_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "completion", "Print a shell completion script (bash, or zsh through bashcompinit)");
  auto shell = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  cmd->add_option("shell", *shell, "bash or zsh")->required();
  cmd->add_option("-o,--output", *output, "write the script to FILE instead of stdout");
  const CLI::App* root = &app;
  return {cmd, [root, shell, output](Streams& streams) {
            std::string script;
            if (*shell == "bash") {
              script = bash_script(*root);
            } else if (*shell == "zsh") {
              // zsh runs bash's completion functions through bashcompinit.
              script =
                  "# zsh completion for tunelock: source <(tunelock completion zsh)\n"
                  "autoload -U +X bashcompinit && bashcompinit\n" +
                  bash_script(*root);
            } else {
              throw Error("completion: no shell '" + *shell + "'; shells: bash, zsh");
            }
            if (output->empty()) {
              streams.out << script;
            } else {
              write_file_atomically(*output, script);
            }
            return kExitOk;
          }};
}

}  // namespace tunelock::cli
