/* Strata's extensions (include/strata/c.h): a read-only handle beside a handle that writes,
 * its refused writes and its refresh; checkpoints of both, opened back with leveldb_open; and
 * the errors of bad arguments. */
#include <sys/stat.h>

#include <strata/c.h>

#include "check.h"

/* The key and value of entry i, written with `tag`. */
static void entry(char key[32], char value[64], int i, const char* tag) {
  snprintf(key, 32, "key%05d", i);
  snprintf(value, 64, "%s-%d-padding-padding-padding-padding", tag, i);
}

static void put_many(leveldb_t* db, const leveldb_writeoptions_t* wo, int from, int to,
                     const char* tag) {
  char key[32], value[64];
  for (int i = from; i < to; i++) {
    entry(key, value, i, tag);
    put(db, wo, key, value);
  }
}

static void check_many(leveldb_t* db, const leveldb_readoptions_t* ro, int from, int to,
                       const char* tag) {
  char key[32], value[64];
  for (int i = from; i < to; i++) {
    entry(key, value, i, tag);
    check_get(db, ro, key, value);
  }
}

static int count(leveldb_t* db, const leveldb_readoptions_t* ro) {
  leveldb_iterator_t* it = leveldb_create_iterator(db, ro);
  int n = 0;
  for (leveldb_iter_seek_to_first(it); leveldb_iter_valid(it); leveldb_iter_next(it)) n++;
  char* err = NULL;
  leveldb_iter_get_error(it, &err);
  CHECK_OK(err);
  leveldb_iter_destroy(it);
  return n;
}

int main(void) {
  char* path = db_path("strata_ext");
  char* err = NULL;
  leveldb_options_t* options = leveldb_options_create();
  leveldb_options_set_create_if_missing(options, 1);
  leveldb_options_set_write_buffer_size(options, 64 << 10);
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();

  section("a read-only handle beside a handle that writes");
  leveldb_t* writer = leveldb_open(options, path, &err);
  CHECK_OK(err);
  put_many(writer, wo, 0, 3000, "first");
  leveldb_t* reader = strata_open_read_only(NULL, path, &err);
  CHECK_OK(err);
  CHECK(reader != NULL);
  CHECK(strata_is_read_only(reader) == 1);
  CHECK(strata_is_read_only(writer) == 0);
  CHECK(strata_is_read_only(NULL) == 0);
  check_many(reader, ro, 0, 3000, "first");
  CHECK(count(reader, ro) == 3000);

  section("writes on a read-only handle are not implemented");
  leveldb_put(reader, wo, "k", 1, "v", 1, &err);
  CHECK_ERR(err, "Not implemented: ");
  leveldb_delete(reader, wo, "key00001", 8, &err);
  CHECK_ERR(err, "read-only");
  leveldb_writebatch_t* batch = leveldb_writebatch_create();
  leveldb_writebatch_put(batch, "k", 1, "v", 1);
  leveldb_write(reader, wo, batch, &err);
  CHECK_ERR(err, "Not implemented: ");
  leveldb_writebatch_destroy(batch);
  check_get(reader, ro, "k", NULL);

  section("refresh");
  put_many(writer, wo, 3000, 4000, "second");
  leveldb_compact_range(writer, NULL, 0, NULL, 0);
  check_get(reader, ro, "key03000", NULL);
  strata_refresh(reader, &err);
  CHECK_OK(err);
  check_many(reader, ro, 3000, 4000, "second");
  strata_refresh(writer, &err); /* nothing to do */
  CHECK_OK(err);

  section("checkpoints of both handles");
  size_t len = strlen(path) + 32;
  char* copy_w = malloc(len);
  char* copy_r = malloc(len);
  CHECK(copy_w != NULL && copy_r != NULL);
  snprintf(copy_w, len, "%s-copy-w", path);
  snprintf(copy_r, len, "%s-copy-r", path);
  strata_checkpoint(writer, copy_w, &err);
  CHECK_OK(err);
  put_many(writer, wo, 4000, 4100, "third");
  strata_checkpoint(reader, copy_r, &err);
  CHECK_OK(err);
  strata_checkpoint(writer, copy_w, &err); /* the target exists */
  CHECK_ERR(err, "Invalid argument: ");
  leveldb_options_set_create_if_missing(options, 0);
  leveldb_options_set_paranoid_checks(options, 1);
  const char* copies[2] = {copy_w, copy_r};
  for (int c = 0; c < 2; c++) {
    leveldb_t* copy = leveldb_open(options, copies[c], &err);
    CHECK_OK(err);
    check_many(copy, ro, 0, 3000, "first");
    check_many(copy, ro, 3000, 4000, "second");
    check_get(copy, ro, "key04000", NULL);
    CHECK(count(copy, ro) == 4000);
    leveldb_close(copy);
    destroy(copies[c]);
  }
  free(copy_w);
  free(copy_r);

  section("bad arguments");
  CHECK(strata_open_read_only(NULL, NULL, &err) == NULL);
  CHECK_ERR(err, "Invalid argument");
  char* missing = db_path("strata_ext_missing");
  CHECK(strata_open_read_only(NULL, missing, &err) == NULL);
  CHECK_ERR(err, "Invalid argument: ");
  struct stat st;
  CHECK(stat(missing, &st) != 0); /* not created */
  free(missing);
  strata_refresh(NULL, &err);
  CHECK_ERR(err, "Invalid argument");
  strata_checkpoint(NULL, "/nowhere", &err);
  CHECK_ERR(err, "Invalid argument");
  strata_checkpoint(writer, NULL, &err);
  CHECK_ERR(err, "Invalid argument");

  leveldb_close(reader);
  leveldb_close(writer);
  destroy(path);
  free(path);
  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
  leveldb_options_destroy(options);
  passed("strata_ext_test");
  return 0;
}
