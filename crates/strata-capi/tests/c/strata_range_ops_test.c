/* Strata's extensions for batched reads, range deletes and expiring keys (include/strata/c.h):
 * strata_get_many against leveldb_get (duplicates, absent keys, a snapshot), range deletes
 * and puts with a time to live alone and in batches, their refusal without the options,
 * strata_clear_range on a LevelDB-format database, and the errors of bad arguments. */
#include <strata/c.h>

#include "check.h"

static void key_of(char key[32], int i) { snprintf(key, 32, "key%05d", i); }

/* get_many of the keys `which[0..n)` at `ro` answers what leveldb_get answers for each. */
static void check_get_many(leveldb_t* db, const leveldb_readoptions_t* ro, const int* which,
                           size_t n) {
  char names[64][32];
  const char* keys[64];
  size_t keylens[64];
  char* values[64];
  size_t vallens[64];
  CHECK(n <= 64);
  for (size_t i = 0; i < n; i++) {
    key_of(names[i], which[i]);
    keys[i] = names[i];
    keylens[i] = strlen(names[i]);
  }
  char* err = NULL;
  strata_get_many(db, ro, n, keys, keylens, values, vallens, &err);
  CHECK_OK(err);
  for (size_t i = 0; i < n; i++) {
    size_t len = 0;
    char* single = leveldb_get(db, ro, keys[i], keylens[i], &len, &err);
    CHECK_OK(err);
    CHECK((single == NULL) == (values[i] == NULL));
    if (single != NULL) {
      CHECK(len == vallens[i] && memcmp(single, values[i], len) == 0);
    } else {
      CHECK(vallens[i] == 0);
    }
    leveldb_free(single);
    leveldb_free(values[i]);
  }
}

int main(void) {
  char* path = db_path("strata_range_ops");
  char* err = NULL;
  leveldb_options_t* options = leveldb_options_create();
  leveldb_options_set_create_if_missing(options, 1);
  leveldb_options_set_write_buffer_size(options, 64 << 10);
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  char key[32];

  section("without the options: extension writes refused, clear_range works");
  leveldb_t* db = leveldb_open(options, path, &err);
  CHECK_OK(err);
  for (int i = 0; i < 2000; i++) {
    key_of(key, i);
    leveldb_put(db, wo, key, strlen(key), "value", 5, &err);
    CHECK_OK(err);
  }
  strata_delete_range(db, wo, "key00000", 8, "key00010", 8, &err);
  CHECK_ERR(err, "Not implemented: ");
  strata_put_with_ttl(db, wo, "k", 1, "v", 1, 1000, &err);
  CHECK_ERR(err, "Options::expiring_keys");
  uint64_t cleared = strata_clear_range(db, wo, "key00100", 8, "key00200", 8, &err);
  CHECK_OK(err);
  CHECK(cleared == 100);
  check_get(db, ro, "key00150", NULL);
  check_get(db, ro, "key00200", "value");

  section("get_many answers what leveldb_get answers");
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  const int some[] = {5, 150, 5, 1999, 99999, 0, 1500, 100, 200, 1500};
  check_get_many(db, ro, some, sizeof some / sizeof some[0]);
  const leveldb_snapshot_t* snapshot = leveldb_create_snapshot(db);
  leveldb_readoptions_t* at_snapshot = leveldb_readoptions_create();
  leveldb_readoptions_set_snapshot(at_snapshot, snapshot);
  leveldb_delete(db, wo, "key00005", 8, &err);
  CHECK_OK(err);
  check_get_many(db, at_snapshot, some, sizeof some / sizeof some[0]);
  check_get_many(db, ro, some, sizeof some / sizeof some[0]);
  check_get(db, at_snapshot, "key00005", "value");
  check_get(db, ro, "key00005", NULL);
  leveldb_readoptions_destroy(at_snapshot);
  leveldb_release_snapshot(db, snapshot);
  strata_get_many(db, ro, 0, NULL, NULL, NULL, NULL, &err); /* nothing to do */
  CHECK_OK(err);
  leveldb_close(db);

  section("with the options: range deletes and expiring keys");
  strata_options_set_range_deletes(options, 1);
  strata_options_set_expiring_keys(options, 1);
  db = leveldb_open(options, path, &err);
  CHECK_OK(err);
  strata_delete_range(db, wo, "key00000", 8, "key00010", 8, &err);
  CHECK_OK(err);
  check_get(db, ro, "key00009", NULL);
  check_get(db, ro, "key00010", "value");
  strata_delete_range(db, wo, "b", 1, "a", 1, &err);
  CHECK_ERR(err, "Invalid argument: ");
  strata_put_with_ttl(db, wo, "lasting", 7, "l", 1, 3600 * 1000, &err);
  CHECK_OK(err);
  strata_put_with_ttl(db, wo, "expired", 7, "e", 1, 0, &err);
  CHECK_OK(err);
  check_get(db, ro, "lasting", "l");
  check_get(db, ro, "expired", NULL);
  const int deleted[] = {0, 9, 10, 11};
  check_get_many(db, ro, deleted, 4);

  section("in a batch");
  leveldb_writebatch_t* batch = leveldb_writebatch_create();
  strata_writebatch_delete_range(batch, "key00020", 8, "key00030", 8);
  strata_writebatch_put_with_ttl(batch, "batched", 7, "b", 1, 3600 * 1000);
  strata_writebatch_put_with_ttl(batch, "batched-expired", 15, "b", 1, 0);
  leveldb_writebatch_put(batch, "key00025", 8, "again", 5);
  leveldb_write(db, wo, batch, &err);
  CHECK_OK(err);
  check_get(db, ro, "key00024", NULL);
  check_get(db, ro, "key00025", "again");
  check_get(db, ro, "batched", "b");
  check_get(db, ro, "batched-expired", NULL);
  leveldb_writebatch_destroy(batch);
  leveldb_close(db);

  section("the extensions are recorded: an open without the options is refused");
  strata_options_set_range_deletes(options, 0);
  db = leveldb_open(options, path, &err);
  CHECK(db == NULL);
  CHECK_ERR(err, "Options::range_deletes");
  strata_options_set_range_deletes(options, 1);
  db = leveldb_open(options, path, &err);
  CHECK_OK(err);
  check_get(db, ro, "lasting", "l");
  check_get(db, ro, "key00009", NULL);

  section("bad arguments");
  const char* keys[2] = {"a", NULL};
  size_t keylens[2] = {1, 3};
  char* values[2] = {(char*)1, (char*)1};
  size_t vallens[2];
  strata_get_many(db, ro, 2, keys, keylens, values, vallens, &err);
  CHECK_ERR(err, "Invalid argument");
  CHECK(values[0] == NULL && values[1] == NULL);
  strata_get_many(NULL, ro, 2, keys, keylens, values, vallens, &err);
  CHECK_ERR(err, "Invalid argument");
  strata_get_many(db, ro, 2, NULL, keylens, values, vallens, &err);
  CHECK_ERR(err, "Invalid argument");
  strata_get_many(db, ro, 2, keys, keylens, NULL, vallens, &err);
  CHECK_ERR(err, "Invalid argument");
  strata_delete_range(NULL, wo, "a", 1, "b", 1, &err);
  CHECK_ERR(err, "Invalid argument");
  strata_delete_range(db, wo, NULL, 1, "b", 1, &err);
  CHECK_ERR(err, "Invalid argument");
  CHECK(strata_clear_range(NULL, wo, "a", 1, "b", 1, &err) == 0);
  CHECK_ERR(err, "Invalid argument");
  strata_put_with_ttl(db, wo, NULL, 1, "v", 1, 10, &err);
  CHECK_ERR(err, "Invalid argument");
  strata_writebatch_delete_range(NULL, "a", 1, "b", 1); /* ignored */
  strata_writebatch_put_with_ttl(NULL, "a", 1, "b", 1, 1);
  strata_options_set_range_deletes(NULL, 1);
  strata_options_set_expiring_keys(NULL, 1);

  leveldb_close(db);
  destroy(path);
  free(path);
  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
  leveldb_options_destroy(options);
  passed("strata_range_ops_test");
  return 0;
}
