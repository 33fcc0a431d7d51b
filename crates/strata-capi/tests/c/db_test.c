/* The database functions: open and its errors, put/get/delete, reopen, properties,
 * approximate sizes, compact range, destroy, repair, options setters, env, versions, and the
 * errptr convention. */
#include <stdint.h>
#include <sys/stat.h>

#include "check.h"

static leveldb_options_t* default_options(void) {
  leveldb_options_t* o = leveldb_options_create();
  leveldb_options_set_create_if_missing(o, 1);
  return o;
}

static void test_versions_and_env(void) {
  section("versions and env");
  CHECK(leveldb_major_version() == 1);
  CHECK(leveldb_minor_version() == 23);

  leveldb_env_t* env = leveldb_create_default_env();
  CHECK(env != NULL);
  char* dir = leveldb_env_get_test_directory(env);
  CHECK(dir != NULL);
  struct stat st;
  CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
  const char* tmp = getenv("TEST_TMPDIR");
  if (tmp != NULL && tmp[0] != '\0') {
    CHECK(strcmp(dir, tmp) == 0);
  } else {
    char expected[64];
    snprintf(expected, sizeof expected, "/tmp/leveldbtest-%d", (int)geteuid());
    CHECK(strcmp(dir, expected) == 0);
  }
  leveldb_free(dir);
  leveldb_env_destroy(env);
  leveldb_free(NULL); /* freeing NULL is harmless */
}

static void test_open_errors(void) {
  section("open errors");
  char* path = db_path("open_errors");
  char* err = NULL;
  leveldb_options_t* o = leveldb_options_create();

  /* Missing database without create_if_missing. */
  leveldb_t* db = leveldb_open(o, path, &err);
  CHECK(db == NULL);
  CHECK_ERR(err, "Invalid argument: ");

  if (STRATA_EXTENSIONS) { /* a NULL name is an invalid argument, not a crash */
    db = leveldb_open(o, NULL, &err);
    CHECK(db == NULL);
    CHECK_ERR(err, "Invalid argument");
  }

  /* Created, then error_if_exists refuses it. */
  leveldb_options_set_create_if_missing(o, 1);
  db = leveldb_open(o, path, &err);
  CHECK_OK(err);
  CHECK(db != NULL);

  /* The LOCK keeps a second open out, even in the same process. */
  leveldb_t* second = leveldb_open(o, path, &err);
  CHECK(second == NULL);
  CHECK_ERR(err, "IO error: ");
  leveldb_close(db);

  leveldb_options_set_error_if_exists(o, 1);
  db = leveldb_open(o, path, &err);
  CHECK(db == NULL);
  CHECK_ERR(err, "exists");

  /* A later error replaces (and frees) an earlier message left in errptr. */
  db = leveldb_open(o, path, &err);
  CHECK(db == NULL && err != NULL);
  leveldb_options_set_error_if_exists(o, 0);
  leveldb_options_set_create_if_missing(o, 0);
  char missing[4200];
  snprintf(missing, sizeof missing, "%s-missing", path);
  db = leveldb_open(o, missing, &err);
  CHECK(db == NULL);
  CHECK_ERR(err, "does not exist");

  leveldb_options_destroy(o);
  destroy(path);
  free(path);
}

static void test_put_get_delete(void) {
  section("put, get, delete, reopen");
  char* path = db_path("put_get");
  char* err = NULL;
  leveldb_options_t* o = default_options();
  leveldb_t* db = leveldb_open(o, path, &err);
  CHECK_OK(err);
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();

  check_get(db, ro, "foo", NULL);
  put(db, wo, "foo", "hello");
  check_get(db, ro, "foo", "hello");
  put(db, wo, "foo", "world");
  check_get(db, ro, "foo", "world");

  /* Keys and values are byte strings: NUL bytes and empty values are kept. */
  const char bin_key[] = {'a', 0, 'b'};
  const char bin_val[] = {0, 1, 2, 0};
  leveldb_put(db, wo, bin_key, sizeof bin_key, bin_val, sizeof bin_val, &err);
  CHECK_OK(err);
  size_t len = 0;
  char* v = leveldb_get(db, ro, bin_key, sizeof bin_key, &len, &err);
  CHECK_OK(err);
  CHECK(v != NULL && len == sizeof bin_val && memcmp(v, bin_val, len) == 0);
  leveldb_free(v);
  v = leveldb_get(db, ro, "a", 1, &len, &err); /* a prefix is another key */
  CHECK_OK(err);
  CHECK(v == NULL && len == 0);

  leveldb_put(db, wo, "empty", 5, NULL, 0, &err);
  CHECK_OK(err);
  len = 99;
  v = leveldb_get(db, ro, "empty", 5, &len, &err);
  CHECK_OK(err);
  CHECK(v != NULL && len == 0); /* found, empty: not NULL */
  leveldb_free(v);

  /* Synced writes, and (Strata) NULL options meaning the defaults. */
  leveldb_writeoptions_set_sync(wo, 1);
  put(db, wo, "synced", "yes");
  leveldb_writeoptions_set_sync(wo, 0);
  if (STRATA_EXTENSIONS) {
    leveldb_put(db, NULL, "nullopts", 8, "w", 1, &err);
    CHECK_OK(err);
    check_get(db, NULL, "nullopts", "w");
  } else {
    put(db, wo, "nullopts", "w");
  }

  leveldb_delete(db, wo, "foo", 3, &err);
  CHECK_OK(err);
  check_get(db, ro, "foo", NULL);
  leveldb_delete(db, wo, "never-there", 11, &err); /* not an error */
  CHECK_OK(err);

  if (STRATA_EXTENSIONS) { /* invalid arguments are reported, not crashed on */
    leveldb_put(NULL, wo, "k", 1, "v", 1, &err);
    CHECK_ERR(err, "Invalid argument");
    leveldb_put(db, wo, NULL, 4, "v", 1, &err);
    CHECK_ERR(err, "Invalid argument");
    v = leveldb_get(NULL, ro, "k", 1, &len, &err);
    CHECK(v == NULL);
    CHECK_ERR(err, "Invalid argument");
    leveldb_delete(NULL, wo, "k", 1, &err);
    CHECK_ERR(err, "Invalid argument");
  }

  /* Everything survives a reopen (recovered from the log). */
  leveldb_close(db);
  db = leveldb_open(o, path, &err);
  CHECK_OK(err);
  check_get(db, ro, "synced", "yes");
  check_get(db, ro, "nullopts", "w");
  check_get(db, ro, "foo", NULL);
  len = 0;
  v = leveldb_get(db, ro, bin_key, sizeof bin_key, &len, &err);
  CHECK_OK(err);
  CHECK(v != NULL && len == sizeof bin_val && memcmp(v, bin_val, len) == 0);
  leveldb_free(v);

  leveldb_close(db);
  if (STRATA_EXTENSIONS) leveldb_close(NULL); /* harmless */
  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
  leveldb_options_destroy(o);
  destroy(path);
  free(path);
}

/* Writes `n` keys key000000.. with 100-byte values. */
static void fill(leveldb_t* db, int n) {
  char* err = NULL;
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  char key[32], val[100];
  memset(val, 'x', sizeof val);
  for (int i = 0; i < n; i++) {
    snprintf(key, sizeof key, "key%06d", i);
    val[0] = (char)('a' + i % 26);
    leveldb_put(db, wo, key, strlen(key), val, sizeof val, &err);
    CHECK_OK(err);
  }
  leveldb_writeoptions_destroy(wo);
}

static int files_at_level(leveldb_t* db, int level) {
  char name[64];
  snprintf(name, sizeof name, "leveldb.num-files-at-level%d", level);
  char* prop = leveldb_property_value(db, name);
  CHECK(prop != NULL);
  int n = atoi(prop);
  leveldb_free(prop);
  return n;
}

static void test_properties_sizes_compaction(void) {
  section("properties, approximate sizes, compact range");
  char* path = db_path("props");
  char* err = NULL;
  leveldb_options_t* o = default_options();
  leveldb_options_set_compression(o, leveldb_no_compression); /* sizes then track the data */
  leveldb_t* db = leveldb_open(o, path, &err);
  CHECK_OK(err);

  CHECK(leveldb_property_value(db, "leveldb.no-such-property") == NULL);
  CHECK(leveldb_property_value(db, "nonsense") == NULL);
  if (STRATA_EXTENSIONS) CHECK(leveldb_property_value(NULL, "leveldb.stats") == NULL);
  char* stats = leveldb_property_value(db, "leveldb.stats");
  CHECK(stats != NULL && strstr(stats, "Level") != NULL);
  leveldb_free(stats);
  char* mem = leveldb_property_value(db, "leveldb.approximate-memory-usage");
  CHECK(mem != NULL && atoll(mem) >= 0);
  leveldb_free(mem);
  CHECK(files_at_level(db, 0) == 0);

  fill(db, 20000); /* ~2.2 MB: with the 4 MiB buffer still all in memory */

  /* Everything: begin and end unbounded. Afterwards the data is in tables. */
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  int total = 0;
  for (int level = 0; level < 7; level++) total += files_at_level(db, level);
  CHECK(total > 0);
  CHECK(files_at_level(db, 0) == 0); /* pushed below level 0 */
  char* sstables = leveldb_property_value(db, "leveldb.sstables");
  CHECK(sstables != NULL && strlen(sstables) > 0);
  leveldb_free(sstables);

  const char* starts[3] = {"a", "key000000", "key010000"};
  const char* limits[3] = {"k", "key010000", "key020000"};
  size_t start_lens[3] = {1, 9, 9};
  size_t limit_lens[3] = {1, 9, 9};
  uint64_t sizes[3] = {7, 7, 7};
  leveldb_approximate_sizes(db, 3, starts, start_lens, limits, limit_lens, sizes);
  CHECK(sizes[0] == 0);                     /* no key before "k" */
  CHECK(sizes[1] > 500000 && sizes[1] < 2000000); /* ~10000 x 110 bytes */
  CHECK(sizes[2] > 500000 && sizes[2] < 2000000);
  leveldb_approximate_sizes(db, 0, starts, start_lens, limits, limit_lens, sizes); /* no-op */

  /* A bounded compaction over deleted keys removes their data. */
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  char key[32];
  for (int i = 0; i < 10000; i++) {
    snprintf(key, sizeof key, "key%06d", i);
    leveldb_delete(db, wo, key, strlen(key), &err);
    CHECK_OK(err);
  }
  leveldb_writeoptions_destroy(wo);
  leveldb_compact_range(db, "key000000", 9, "key009999", 9);
  leveldb_approximate_sizes(db, 3, starts, start_lens, limits, limit_lens, sizes);
  CHECK(sizes[1] < 100000);
  CHECK(sizes[2] > 500000);
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  check_get(db, ro, "key000005", NULL);
  leveldb_readoptions_destroy(ro);
  if (STRATA_EXTENSIONS) leveldb_compact_range(NULL, NULL, 0, NULL, 0); /* harmless */

  leveldb_close(db);
  leveldb_options_destroy(o);
  destroy(path);
  free(path);
}

static void test_destroy_and_repair(void) {
  section("destroy and repair");
  char* path = db_path("repair");
  char* err = NULL;
  leveldb_options_t* o = default_options();
  leveldb_t* db = leveldb_open(o, path, &err);
  CHECK_OK(err);
  fill(db, 1000);
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  put(db, wo, "after", "compaction");
  leveldb_writeoptions_destroy(wo);

  /* Destroying an open database fails on its LOCK. */
  leveldb_destroy_db(o, path, &err);
  CHECK_ERR(err, "IO error");
  leveldb_close(db);

  /* Repair without a manifest: remove CURRENT, then rebuild from tables and logs. */
  char current[4200];
  snprintf(current, sizeof current, "%s/CURRENT", path);
  CHECK(unlink(current) == 0);
  leveldb_options_set_create_if_missing(o, 0);
  db = leveldb_open(o, path, &err);
  CHECK(db == NULL);
  CHECK_ERR(err, "does not exist");
  leveldb_repair_db(o, path, &err);
  CHECK_OK(err);
  db = leveldb_open(o, path, &err);
  CHECK_OK(err);
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  check_get(db, ro, "after", "compaction");
  size_t len;
  char* v = leveldb_get(db, ro, "key000999", 9, &len, &err);
  CHECK_OK(err);
  CHECK(v != NULL && len == 100);
  leveldb_free(v);
  leveldb_readoptions_destroy(ro);
  leveldb_close(db);

  if (STRATA_EXTENSIONS) {
    leveldb_repair_db(o, NULL, &err);
    CHECK_ERR(err, "Invalid argument");
    leveldb_destroy_db(o, NULL, &err);
    CHECK_ERR(err, "Invalid argument");
  }

  leveldb_destroy_db(o, path, &err);
  CHECK_OK(err);
  struct stat st;
  CHECK(stat(current, &st) != 0); /* gone */
  leveldb_options_set_error_if_exists(o, 0);
  leveldb_options_set_create_if_missing(o, 0);
  db = leveldb_open(o, path, &err);
  CHECK(db == NULL);
  CHECK_ERR(err, "does not exist");
  leveldb_options_destroy(o);
  free(path);
}

static void test_all_option_setters(void) {
  section("every options setter");
  char* path = db_path("setters");
  char* err = NULL;
  leveldb_env_t* env = leveldb_create_default_env();
  leveldb_cache_t* cache = leveldb_cache_create_lru(1 << 20);
  leveldb_filterpolicy_t* bloom = leveldb_filterpolicy_create_bloom(10);
  leveldb_options_t* o = leveldb_options_create();
  if (STRATA_EXTENSIONS) leveldb_options_set_comparator(o, NULL); /* the default order */
  leveldb_options_set_filter_policy(o, bloom);
  leveldb_options_set_create_if_missing(o, 1);
  leveldb_options_set_error_if_exists(o, 1);
  leveldb_options_set_paranoid_checks(o, 1);
  leveldb_options_set_env(o, env);
  leveldb_options_set_info_log(o, NULL);
  leveldb_options_set_write_buffer_size(o, 100000);
  leveldb_options_set_max_open_files(o, 100);
  leveldb_options_set_cache(o, cache);
  leveldb_options_set_block_size(o, 1024);
  leveldb_options_set_block_restart_interval(o, 8);
  leveldb_options_set_max_file_size(o, 1 << 20);
  leveldb_options_set_compression(o, leveldb_snappy_compression);
  if (STRATA_EXTENSIONS) {
    leveldb_options_set_compression(o, 12345); /* unknown: ignored */
    /* Destroying the cache, env and policy now only drops the caller's reference. */
    leveldb_cache_destroy(cache);
    leveldb_env_destroy(env);
    leveldb_filterpolicy_destroy(bloom);
  }

  leveldb_t* db = leveldb_open(o, path, &err);
  CHECK_OK(err);
  fill(db, 5000); /* > 100000-byte buffer: several tables get written */
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  leveldb_readoptions_set_verify_checksums(ro, 1);
  leveldb_readoptions_set_fill_cache(ro, 0);
  size_t len;
  char* v = leveldb_get(db, ro, "key004321", 9, &len, &err);
  CHECK_OK(err);
  CHECK(v != NULL && len == 100 && v[0] == (char)('a' + 4321 % 26));
  leveldb_free(v);
  check_get(db, ro, "key999999", NULL);
  leveldb_readoptions_destroy(ro);
  leveldb_close(db);

  /* Back to the defaults through NULL (LevelDB: only the filter policy accepts NULL). */
  leveldb_options_set_filter_policy(o, NULL);
  if (STRATA_EXTENSIONS) {
    leveldb_options_set_cache(o, NULL);
    leveldb_options_set_env(o, NULL);
  }
  leveldb_options_set_error_if_exists(o, 0);
  db = leveldb_open(o, path, &err);
  CHECK_OK(err);
  ro = leveldb_readoptions_create();
  char expected[101];
  memset(expected, 'x', 100);
  expected[0] = 'b';
  expected[100] = '\0';
  check_get(db, ro, "key000001", expected);
  leveldb_readoptions_destroy(ro);
  leveldb_close(db);

  if (STRATA_EXTENSIONS) { /* setters on NULL objects do nothing */
    leveldb_options_set_create_if_missing(NULL, 1);
    leveldb_readoptions_set_fill_cache(NULL, 1);
    leveldb_writeoptions_set_sync(NULL, 1);
    leveldb_options_destroy(NULL);
  }

  leveldb_options_destroy(o);
  if (!STRATA_EXTENSIONS) {
    leveldb_cache_destroy(cache);
    leveldb_env_destroy(env);
    leveldb_filterpolicy_destroy(bloom);
  }
  destroy(path);
  free(path);
}

int main(void) {
  test_versions_and_env();
  test_open_errors();
  test_put_get_delete();
  test_properties_sizes_compaction();
  test_destroy_and_repair();
  test_all_option_setters();
  passed("db_test");
  return 0;
}
