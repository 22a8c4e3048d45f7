// The file-system edge under abuse: inputs that are not regular files are
// refused without waiting on them, outputs never replace a device or FIFO
// and follow symlinks, and a write that fails (full disk, read-only folder,
// a process killed mid-write) leaves the previous file whole and no temp
// file behind for the next run.
#include <boost/test/unit_test.hpp>

#include "error_of.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

#include "temp_dir.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/files.hpp"

using namespace tunelock;
using tunelock::testing::TempDir;
namespace fs = std::filesystem;

using tunelock::testing::contains;
using tunelock::testing::error_of;

namespace {

// The names in `dir`, sorted.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) out.push_back(entry.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

// Runs `body` in a child process and returns its exit status (-1: killed).
int in_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Exit status of a child that tried a write: 2 when it failed with Error.
int try_write(const fs::path& path, const std::string& bytes) {
  try {
    write_file_atomically(path, bytes);
  } catch (const Error&) {
    return 2;
  }
  return 0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(special_files)

BOOST_AUTO_TEST_CASE(reading_a_fifo_is_refused_without_waiting_for_a_writer) {
  TempDir dir;
  const fs::path fifo = dir.path() / "table.json";
  BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  BOOST_TEST(error_of([&] { read_file(fifo); }) == fifo.string() + ": is a FIFO, expected a file");
}

BOOST_AUTO_TEST_CASE(reading_a_device_is_refused) {
  BOOST_TEST(error_of([] { read_file("/dev/zero"); }) ==
             "/dev/zero: is a character device, expected a file");
}

BOOST_AUTO_TEST_CASE(an_output_that_is_a_fifo_is_refused_and_kept) {
  TempDir dir;
  const fs::path fifo = dir.path() / "out.tlb";
  BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  BOOST_TEST(contains(error_of([&] { write_file_atomically(fifo, "x"); }),
                      "is a FIFO, not a regular file; refusing to replace it"));
  BOOST_TEST(fs::is_fifo(fs::symlink_status(fifo)));
  BOOST_TEST(names_in(dir.path()) == std::vector<std::string>{"out.tlb"});
}

BOOST_AUTO_TEST_CASE(an_output_that_is_a_device_is_refused_and_kept) {
  // A device node of our own (as /dev/null is), so a failure here cannot
  // touch the system's; creating one needs root, else the case is skipped.
  TempDir dir;
  const fs::path device = dir.path() / "null";
  if (::mknod(device.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) {
    BOOST_TEST_MESSAGE("mknod needs root: skipped");
    return;
  }
  BOOST_TEST(contains(error_of([&] { write_file_atomically(device, "x"); }),
                      "is a character device, not a regular file; refusing to replace it"));
  BOOST_TEST(fs::is_character_file(fs::symlink_status(device)));
}

BOOST_AUTO_TEST_CASE(a_symlinked_output_updates_its_target_and_stays_a_link) {
  TempDir dir;
  const fs::path real = dir.write("real/table.json", "old");
  const fs::path link = dir.path() / "table.json";
  fs::create_symlink(real, link);
  write_file_atomically(link, "new");
  BOOST_TEST(fs::is_symlink(fs::symlink_status(link)));
  BOOST_TEST(read_file(real) == "new");
  // A dangling link: the write creates its target.
  const fs::path dangling = dir.path() / "later.json";
  fs::create_symlink(dir.path() / "real" / "later.json", dangling);
  write_file_atomically(dangling, "made");
  BOOST_TEST(fs::is_symlink(fs::symlink_status(dangling)));
  BOOST_TEST(read_file(dir.path() / "real" / "later.json") == "made");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(write_faults)

BOOST_AUTO_TEST_CASE(a_full_disk_fails_the_write_and_keeps_the_previous_file) {
  TempDir dir;
  const fs::path target = dir.write("table.tlb", "previous");
  // A file-size limit makes every write past 4 KiB fail as a full disk does
  // (EFBIG instead of ENOSPC), without needing a small file system.
  const int status = in_child([&] {
    const rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    ::signal(SIGXFSZ, SIG_IGN);
    return try_write(target, std::string(1 << 20, 'x'));
  });
  BOOST_TEST(status == 2);
  BOOST_TEST(read_file(target) == "previous");
  BOOST_TEST(names_in(dir.path()) == std::vector<std::string>{"table.tlb"});
}

BOOST_AUTO_TEST_CASE(a_read_only_folder_fails_the_write_and_keeps_the_previous_file) {
  TempDir dir;
  const fs::path folder = dir.path() / "ro";
  const fs::path target = dir.write("ro/log.rank0.json", "previous");
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read |
                              fs::perms::others_exec);
  // Root writes anywhere: the child gives up root first, as a job would run.
  const int status = in_child([&] {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return 3;
    return try_write(target, "new");
  });
  fs::permissions(folder, fs::perms::owner_all);
  BOOST_TEST(status == 2);
  BOOST_TEST(read_file(target) == "previous");
  BOOST_TEST(names_in(folder) == std::vector<std::string>{"log.rank0.json"});
}

BOOST_AUTO_TEST_CASE(a_writer_killed_mid_write_leaves_a_whole_file_and_no_temp_for_the_next) {
  TempDir dir;
  const fs::path target = dir.path() / "records.rank0.json";
  const std::string a(1 << 20, 'a'), b(1 << 20, 'b');
  write_file_atomically(target, a);
  constexpr int kKills = 20;
  for (int kill = 0; kill < kKills; ++kill) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      for (int i = 0;; ++i) try_write(target, i % 2 ? a : b);
    }
    // Different moments of the write loop: 1 to 20 ms in.
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + kill));
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    const std::string seen = read_file(target);
    BOOST_TEST_INFO("kill " << kill);
    BOOST_TEST((seen == a || seen == b));
  }
  write_file_atomically(target, "final");
  BOOST_TEST(names_in(dir.path()) == std::vector<std::string>{"records.rank0.json"});
  BOOST_TEST(read_file(target) == "final");
  BOOST_TEST_MESSAGE(kKills << " writers killed mid-write, all survived");
}

BOOST_AUTO_TEST_SUITE_END()
