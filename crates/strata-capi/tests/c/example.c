/* The C example shown in the README: open, write, read, iterate, close, destroy.
 * Built and run by the C API tests, so the README's code is known to compile and work. */
#include <leveldb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die_on(char* err) {
  if (err != NULL) {
    fprintf(stderr, "error: %s\n", err);
    leveldb_free(err);
    exit(1);
  }
}

int main(void) {
  char* err = NULL;
  leveldb_env_t* env = leveldb_create_default_env();
  char* dir = leveldb_env_get_test_directory(env);
  char path[4096];
  snprintf(path, sizeof path, "%s/example-c", dir);
  leveldb_free(dir);
  leveldb_env_destroy(env);

  leveldb_options_t* options = leveldb_options_create();
  leveldb_options_set_create_if_missing(options, 1);
  leveldb_t* db = leveldb_open(options, path, &err);
  die_on(err);

  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();

  /* Writes: a single put, then an atomic batch. */
  leveldb_put(db, wo, "apple", 5, "red", 3, &err);
  die_on(err);
  leveldb_writebatch_t* batch = leveldb_writebatch_create();
  leveldb_writebatch_put(batch, "banana", 6, "yellow", 6);
  leveldb_writebatch_put(batch, "cherry", 6, "dark red", 8);
  leveldb_writebatch_delete(batch, "apple", 5);
  leveldb_write(db, wo, batch, &err);
  die_on(err);
  leveldb_writebatch_destroy(batch);

  /* A read: the value comes back in a malloc'd buffer, NULL when the key is missing. */
  size_t len;
  char* value = leveldb_get(db, ro, "banana", 6, &len, &err);
  die_on(err);
  printf("banana = %.*s\n", (int)len, value);
  leveldb_free(value);

  /* A scan in key order. */
  leveldb_iterator_t* it = leveldb_create_iterator(db, ro);
  for (leveldb_iter_seek_to_first(it); leveldb_iter_valid(it); leveldb_iter_next(it)) {
    size_t klen, vlen;
    const char* k = leveldb_iter_key(it, &klen);
    const char* v = leveldb_iter_value(it, &vlen);
    printf("%.*s -> %.*s\n", (int)klen, k, (int)vlen, v);
  }
  leveldb_iter_get_error(it, &err);
  die_on(err);
  leveldb_iter_destroy(it);

  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
  leveldb_close(db);
  leveldb_destroy_db(options, path, &err);
  die_on(err);
  leveldb_options_destroy(options);
  return 0;
}
