// A watched program whose launch log folder disappears during its run: it
// starts the watch in process (as `tunelock.watch.start` does), replaces
// the folder TUNELOCK_WATCH_OUT points into with a file and exits, so the
// log cannot be written at exit (nor its folder made again). `tunelock
// watch` must name that cause.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tunelock/watch.h"

int main() {
  const char* out = std::getenv("TUNELOCK_WATCH_OUT");
  if (!out) {
    std::fprintf(stderr, "watched_folder_removed: run me under tunelock watch\n");
    return 2;
  }
  tunelock_watch_start(nullptr);  // no GPU here: the run is unobserved, the log still due
  const std::filesystem::path folder = std::filesystem::path(out).parent_path();
  std::filesystem::remove_all(folder);
  std::ofstream(folder) << "a file where the logs' folder was\n";
  return 0;
}
