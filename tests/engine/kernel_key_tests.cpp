// Kernel ids, module scoping and tuning keys.
#include <boost/test/unit_test.hpp>

#include "tunelock/model/kernel_id.hpp"
#include "tunelock/model/tuning_key.hpp"

using namespace tunelock;

BOOST_AUTO_TEST_SUITE(kernel_id)

BOOST_AUTO_TEST_CASE(a_table_files_a_kernel_under_its_qualified_then_its_bare_name) {
  const KernelId kernel = KernelId::parse("pkg.ops.mm");
  const std::string qualified = kernel.qualified();
  const TableNames names = table_names(kernel, qualified);
  BOOST_TEST_REQUIRE(names.count == 2u);
  BOOST_TEST(names.names[0] == "pkg.ops.mm");
  BOOST_TEST(names.names[1] == "mm");
  BOOST_TEST(table_name_applies("pkg.ops.mm", kernel));
  BOOST_TEST(table_name_applies("mm", kernel));
  BOOST_TEST(!table_name_applies("ops.mm", kernel));
  BOOST_TEST(!table_name_applies("mmx", kernel));
  // Without a module the two names are one.
  const KernelId bare = KernelId::parse("mm");
  BOOST_TEST(table_names(bare, bare.qualified()).count == 1u);
  BOOST_TEST(table_name_applies("mm", bare));
}

BOOST_AUTO_TEST_CASE(qualified_name_joins_module_and_name) {
  BOOST_TEST((KernelId{"mamba_ssm.ops", "_fwd"}.qualified()) == "mamba_ssm.ops._fwd");
  BOOST_TEST((KernelId{"", "_fwd"}.qualified()) == "_fwd");
}

BOOST_AUTO_TEST_CASE(parse_splits_at_the_last_dot) {
  BOOST_TEST((KernelId::parse("a.b.kern") == KernelId{"a.b", "kern"}));
  BOOST_TEST((KernelId::parse("kern") == KernelId{"", "kern"}));
}

BOOST_AUTO_TEST_CASE(module_scope_matches_on_package_boundaries) {
  BOOST_TEST(module_covers("a.b", "a.b"));
  BOOST_TEST(module_covers("a.b", "a.b.c"));
  BOOST_TEST(!module_covers("a.b", "a.bc"));
  BOOST_TEST(!module_covers("a.b", "a"));
  BOOST_TEST(!module_covers("a.b.c", "a.b"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(tuning_keys)

BOOST_AUTO_TEST_CASE(key_lists_arguments_then_dtypes) {
  const std::vector<KeyArg> args{{"chunk_size", std::int64_t{128}}, {"IS_CAUSAL", false}};
  const std::vector<std::string_view> dtypes{"torch.bfloat16", "torch.float32"};
  BOOST_TEST(tuning_key(args, dtypes) ==
             "chunk_size=128|IS_CAUSAL=False|torch.bfloat16|torch.float32");
}

BOOST_AUTO_TEST_CASE(key_is_stable_across_calls_and_buffers) {
  const std::vector<KeyArg> args{{"M", std::int64_t{4096}}, {"layout", std::string_view("nt")}};
  const std::vector<std::string_view> dtypes{"f16"};
  std::string reused = "stale contents";
  build_tuning_key(reused, args, dtypes);
  BOOST_TEST(reused == tuning_key(args, dtypes));
  BOOST_TEST(reused == "M=4096|layout=nt|f16");
}

BOOST_AUTO_TEST_CASE(key_changes_with_shape_and_dtype) {
  const std::vector<std::string_view> f16{"f16"}, f32{"f32"};
  const std::vector<KeyArg> m1{{"M", std::int64_t{1024}}}, m2{{"M", std::int64_t{2048}}};
  BOOST_TEST(tuning_key(m1, f16) != tuning_key(m2, f16));
  BOOST_TEST(tuning_key(m1, f16) != tuning_key(m1, f32));
  BOOST_TEST(tuning_key(std::vector<KeyArg>{{"M", std::int64_t{-3}}}, {}) == "M=-3");
  BOOST_TEST(tuning_key({}, {}) == "");
}

BOOST_AUTO_TEST_SUITE_END()
