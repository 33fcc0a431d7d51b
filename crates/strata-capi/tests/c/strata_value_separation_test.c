/* Strata's extensions for value separation (include/strata/c.h): values at or above the size
 * set by strata_options_set_value_separation go to value files; strata_head answers a key's
 * presence and value length from the tree alone, so it keeps answering, at the latest state and
 * at a snapshot, after every value file is deleted, when leveldb_get reports the damage, and so
 * does strata_create_key_iterator's walk of keys and value lengths; a
 * database with value files refuses an open without the option; separated values are compressed
 * as table blocks are (leveldb_options_set_compression); bad arguments are errors. */
#include <dirent.h>
#include <unistd.h>

#include <strata/c.h>

#include "check.h"

static void key_of(char key[32], int i) { snprintf(key, 32, "key%05d", i); }

/* The value of key i: i * 7 % 5000 bytes, so small (inline) and large (separated) values mix. */
static size_t value_len(int i) { return (size_t)(i * 7 % 5000); }

/* Removes every value file (*.vlog) of the database at `path`; returns how many. */
static int remove_value_files(const char* path) {
  DIR* dir = opendir(path);
  CHECK(dir != NULL);
  int removed = 0;
  struct dirent* entry;
  while ((entry = readdir(dir)) != NULL) {
    size_t len = strlen(entry->d_name);
    if (len > 5 && strcmp(entry->d_name + len - 5, ".vlog") == 0) {
      char file[4096];
      snprintf(file, sizeof file, "%s/%s", path, entry->d_name);
      CHECK(unlink(file) == 0);
      removed++;
    }
  }
  closedir(dir);
  return removed;
}

int main(void) {
  char* path = db_path("strata_value_separation");
  char* err = NULL;
  leveldb_options_t* options = leveldb_options_create();
  leveldb_options_set_create_if_missing(options, 1);
  strata_options_set_value_separation(options, 1024);
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  char key[32];
  static char value[5000];
  memset(value, 'v', sizeof value);

  section("values written and read back, large ones through value files");
  leveldb_t* db = leveldb_open(options, path, &err);
  CHECK_OK(err);
  for (int i = 0; i < 600; i++) {
    key_of(key, i);
    leveldb_put(db, wo, key, strlen(key), value, value_len(i), &err);
    CHECK_OK(err);
  }
  for (int i = 0; i < 600; i++) {
    key_of(key, i);
    size_t len = 0;
    char* got = leveldb_get(db, ro, key, strlen(key), &len, &err);
    CHECK_OK(err);
    CHECK(got != NULL && len == value_len(i) && memcmp(got, value, len) == 0);
    leveldb_free(got);
    uint64_t head_len = 99;
    CHECK(strata_head(db, ro, key, strlen(key), &head_len, &err) == 1);
    CHECK_OK(err);
    CHECK(head_len == value_len(i));
  }
  uint64_t head_len = 99;
  CHECK(strata_head(db, ro, "absent", 6, &head_len, &err) == 0);
  CHECK_OK(err);
  CHECK(head_len == 0);

  section("strata_head at a snapshot");
  const leveldb_snapshot_t* snapshot = leveldb_create_snapshot(db);
  key_of(key, 1);
  leveldb_put(db, wo, key, strlen(key), value, 4321, &err); /* value_len(1) was 7 */
  CHECK_OK(err);
  leveldb_delete(db, wo, "key00002", 8, &err);
  CHECK_OK(err);
  leveldb_readoptions_t* at_snapshot = leveldb_readoptions_create();
  leveldb_readoptions_set_snapshot(at_snapshot, snapshot);
  CHECK(strata_head(db, ro, key, strlen(key), &head_len, &err) == 1);
  CHECK_OK(err);
  CHECK(head_len == 4321);
  CHECK(strata_head(db, at_snapshot, key, strlen(key), &head_len, &err) == 1);
  CHECK_OK(err);
  CHECK(head_len == 7);
  CHECK(strata_head(db, ro, "key00002", 8, &head_len, &err) == 0);
  CHECK_OK(err);
  CHECK(strata_head(db, at_snapshot, "key00002", 8, &head_len, &err) == 1);
  CHECK_OK(err);
  CHECK(head_len == value_len(2));
  leveldb_readoptions_destroy(at_snapshot);
  leveldb_release_snapshot(db, snapshot);

  section("strata_head with every value file deleted; leveldb_get reports the damage");
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  leveldb_close(db);
  CHECK(remove_value_files(path) > 0);
  db = leveldb_open(options, path, &err);
  CHECK_OK(err);
  for (int i = 3; i < 600; i++) {
    key_of(key, i);
    CHECK(strata_head(db, ro, key, strlen(key), &head_len, &err) == 1);
    CHECK_OK(err);
    CHECK(head_len == value_len(i));
  }
  section("strata_create_key_iterator walks keys and value lengths, no value file read");
  {
    leveldb_iterator_t* keys = strata_create_key_iterator(db, ro);
    CHECK(keys != NULL);
    int seen = 0;
    for (leveldb_iter_seek(keys, "key00003", 8); leveldb_iter_valid(keys); leveldb_iter_next(keys)) {
      key_of(key, 3 + seen);
      size_t klen = 0, vlen = 99;
      const char* k = leveldb_iter_key(keys, &klen);
      CHECK(klen == strlen(key) && memcmp(k, key, klen) == 0);
      leveldb_iter_value(keys, &vlen);
      CHECK(vlen == 0);
      CHECK(strata_iter_value_length(keys) == value_len(3 + seen));
      seen++;
    }
    CHECK(seen == 597);
    leveldb_iter_get_error(keys, &err);
    CHECK_OK(err);
    leveldb_iter_seek_to_last(keys);
    CHECK(strata_iter_value_length(keys) == value_len(599));
    leveldb_iter_destroy(keys);
    /* A full iteration reads the values, and meets the damage. */
    leveldb_iterator_t* entries = leveldb_create_iterator(db, ro);
    for (leveldb_iter_seek_to_first(entries); leveldb_iter_valid(entries); leveldb_iter_next(entries)) {
    }
    leveldb_iter_get_error(entries, &err);
    CHECK_ERR(err, "Corruption");
    leveldb_iter_destroy(entries);
    CHECK(strata_create_key_iterator(NULL, ro) == NULL);
    CHECK(strata_iter_value_length(NULL) == 0);
  }

  key_of(key, 499); /* 3493 bytes: separated */
  size_t len = 0;
  char* got = leveldb_get(db, ro, key, strlen(key), &len, &err);
  CHECK(got == NULL);
  CHECK_ERR(err, "Corruption");
  leveldb_close(db);

  section("an open without the option is refused");
  leveldb_options_t* plain = leveldb_options_create();
  db = leveldb_open(plain, path, &err);
  CHECK(db == NULL);
  CHECK_ERR(err, "value files");
  leveldb_options_destroy(plain);

  section("separated values compressed as table blocks are: Snappy unless turned off");
  {
    char* packed_path = db_path("strata_value_separation_compressed");
    const unsigned char kinds[2] = {leveldb_snappy_compression, leveldb_no_compression};
    for (int k = 0; k < 2; k++) {
      destroy(packed_path);
      leveldb_options_set_compression(options, kinds[k]);
      leveldb_t* packed = leveldb_open(options, packed_path, &err);
      CHECK_OK(err);
      for (int i = 0; i < 100; i++) {
        key_of(key, i);
        leveldb_put(packed, wo, key, strlen(key), value, 4000, &err);
        CHECK_OK(err);
      }
      char* total = leveldb_property_value(packed, "strata.value-files.total-bytes");
      CHECK(total != NULL);
      long long bytes = atoll(total);
      leveldb_free(total);
      /* 400,000 value bytes of one repeated letter: Snappy stores a small share of them. */
      CHECK(k == 0 ? bytes < 100000 : bytes > 400000);
      key_of(key, 7);
      size_t got_len = 0;
      char* got = leveldb_get(packed, ro, key, strlen(key), &got_len, &err);
      CHECK_OK(err);
      CHECK(got != NULL && got_len == 4000 && memcmp(got, value, 4000) == 0);
      leveldb_free(got);
      leveldb_close(packed);
    }
    /* The compressed database now needs compression on. */
    destroy(packed_path);
    leveldb_options_set_compression(options, leveldb_snappy_compression);
    leveldb_t* packed = leveldb_open(options, packed_path, &err);
    CHECK_OK(err);
    leveldb_close(packed);
    leveldb_options_set_compression(options, leveldb_no_compression);
    CHECK(leveldb_open(options, packed_path, &err) == NULL);
    CHECK_ERR(err, "value-compression");
    leveldb_options_set_compression(options, leveldb_snappy_compression);
    destroy(packed_path);
    free(packed_path);
  }

  section("bad arguments");
  db = leveldb_open(options, path, &err);
  CHECK_OK(err);
  CHECK(strata_head(NULL, ro, "a", 1, &head_len, &err) == 0);
  CHECK_ERR(err, "Invalid argument");
  CHECK(strata_head(db, ro, NULL, 1, &head_len, &err) == 0);
  CHECK_ERR(err, "Invalid argument");
  CHECK(strata_head(db, ro, "a", 1, NULL, &err) == 0);
  CHECK_ERR(err, "Invalid argument");
  strata_options_set_value_separation(NULL, 1024); /* ignored */
  leveldb_close(db);

  destroy(path);
  free(path);
  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
  leveldb_options_destroy(options);
  passed("strata_value_separation_test");
  return 0;
}
