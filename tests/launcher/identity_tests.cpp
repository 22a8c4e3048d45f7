// A host family whose code changes between the record and the pinned run:
// the record carries the family's code identity, merge keeps it in the
// table, and the pinned run compares it once per kernel: a warning, an
// error under TUNELOCK_IDENTITY=strict, or nothing under ignore.
#include <boost/test/unit_test.hpp>

#include "captured_log.hpp"
#include "error_of.hpp"
#include "temp_dir.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/launcher/host_backend.hpp"
#include "tunelock/launcher/kernel_family.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/record_file.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using namespace tunelock::launcher;
using tunelock::testing::CapturedLog;
using tunelock::testing::contains;
using tunelock::testing::error_of;
using tunelock::testing::TempDir;

namespace {

using AddFamily = KernelFamily<int*>;

std::vector<AddFamily::Variant> adders() {
  auto add = [](int* out) { *out += 1; };
  return {{make_config({{"BLOCK", 16}}, 4, 2), add}, {make_config({{"BLOCK", 64}}, 4, 2), add}};
}

AddFamily::Hooks restore_out() {
  AddFamily::Hooks hooks;
  hooks.restore = [](int* out) { return std::vector<NamedBuffer>{{"out", {out, sizeof *out}}}; };
  return hooks;
}

// One process: the family at `version`, three keys, under `policy`.
void run(const Policy& policy, const std::string& version) {
  Notices notices;
  Runtime runtime(0, notices);
  HostBackend host;
  Launcher launcher(host, runtime, TuningOptions{0, 1});
  runtime.install(policy);
  AddFamily add(launcher, {"t.ops", "add"}, {"N"}, adders(), restore_out());
  add.set_code_identity(code_version(version));
  int out = 0;
  for (std::int64_t n : {1, 2, 3}) add({n}, {"i32"}, &out);
  runtime.flush();
}

// A table recorded with the family at version 1, as merge writes it.
void record_table(const TempDir& dir) {
  Policy record;
  record.mode = Mode::record;
  record.record_path = (dir.path() / "rec" / "run").string();
  run(record, "1");
  const RecordFile recorded = load_record_file(dir.path() / "rec" / "run.rank0.json");
  BOOST_TEST(recorded.identities.at("host").at("t.ops.add") == "version:1");
  const MergeResult merged = merge_records({recorded}, "", "");
  BOOST_TEST(merged.identity_conflicts.empty());
  write_file_atomically(dir.path() / "tables" / "host.json", table_to_json(*merged.table));
}

Policy pinned(const TempDir& dir, ProvenanceCheck check) {
  Policy p;
  p.mode = Mode::pinned;
  p.table_path = {(dir.path() / "tables").string()};
  p.identity = check;
  return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_code_identity)

BOOST_AUTO_TEST_CASE(
    changed_code_warns_once_per_kernel_fails_when_strict_and_is_quiet_when_ignored) {
  TempDir dir;
  record_table(dir);
  const auto table = table_from_json(read_file(dir.path() / "tables" / "host.json"), "host.json");
  BOOST_TEST(table->identity("t.ops.add") == "version:1");
  const std::string warning =
      "kernel t.ops.add on host is not the code its table entries were timed on (table: "
      "version:1, this run: version:2); using its entries anyway";
  {
    CapturedLog log;
    run(pinned(dir, ProvenanceCheck::warn), "2");
    BOOST_TEST(log.count(warning) == 1u);  // three keys, one line
    BOOST_TEST(log.count("TUNELOCK_IDENTITY=ignore") == 1u);
  }
  {
    CapturedLog log;
    run(pinned(dir, ProvenanceCheck::warn), "1");  // the same code: nothing to say
    run(pinned(dir, ProvenanceCheck::ignore), "2");
    BOOST_TEST(log.count("not the code its table entries were timed on") == 0u);
  }
  const std::string strict = error_of([&] { run(pinned(dir, ProvenanceCheck::strict), "2"); });
  BOOST_TEST(contains(strict, "table: version:1, this run: version:2"));
  BOOST_TEST(contains(strict, "TUNELOCK_IDENTITY=strict refuses it"));
  BOOST_CHECK_NO_THROW(run(pinned(dir, ProvenanceCheck::strict), "1"));
}

BOOST_AUTO_TEST_CASE(a_family_that_declares_no_identity_is_never_compared) {
  TempDir dir;
  record_table(dir);
  CapturedLog log;
  Notices notices;
  Runtime runtime(0, notices);
  HostBackend host;
  Launcher launcher(host, runtime, TuningOptions{0, 1});
  runtime.install(pinned(dir, ProvenanceCheck::strict));
  AddFamily add(launcher, {"t.ops", "add"}, {"N"}, adders(), restore_out());
  int out = 0;
  BOOST_CHECK_NO_THROW(add({std::int64_t{1}}, {"i32"}, &out));
  BOOST_TEST(log.count("not the code") == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
