/* Tiny helpers shared by the C tests of Strata's LevelDB-compatible C API. Each test is a
 * program that exits 0 when every check holds and prints the first failed check otherwise. */
#ifndef STRATA_C_TEST_CHECK_H
#define STRATA_C_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <leveldb/c.h>

/* The same programs also build against LevelDB itself (-DAGAINST_LEVELDB, linked with its
 * libleveldb), which proves the checks encode LevelDB's behaviour. Checks of Strata's documented
 * extensions (NULL handles and options accepted, objects kept alive by what uses them, unknown
 * option values ignored) run only against Strata, under `if (STRATA_EXTENSIONS)`. */
#ifdef AGAINST_LEVELDB
#define STRATA_EXTENSIONS 0
#else
#define STRATA_EXTENSIONS 1
#endif

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);  \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

/* Fails when err is set; frees nothing (there is nothing to free). */
#define CHECK_OK(err)                                                            \
  do {                                                                           \
    if ((err) != NULL) {                                                         \
      fprintf(stderr, "%s:%d: unexpected error: %s\n", __FILE__, __LINE__, err); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

/* Fails unless err is set and contains `part`; then frees it and resets it to NULL. */
#define CHECK_ERR(err, part)                                                     \
  do {                                                                           \
    if ((err) == NULL || strstr((err), (part)) == NULL) {                        \
      fprintf(stderr, "%s:%d: expected an error containing \"%s\", got %s\n",    \
              __FILE__, __LINE__, (part), (err) ? (err) : "none");               \
      exit(1);                                                                   \
    }                                                                            \
    leveldb_free(err);                                                           \
    (err) = NULL;                                                                \
  } while (0)

static int checks_sections = 0;

/* Announces a group of checks, so a failure is easy to place. */
static inline void section(const char* name) {
  checks_sections++;
  fprintf(stderr, "  %s\n", name);
}

/* A fresh database path under the test directory: <testdir>/<name>-<pid>; caller frees. */
static inline char* db_path(const char* name) {
  leveldb_env_t* env = leveldb_create_default_env();
  char* dir = leveldb_env_get_test_directory(env);
  leveldb_env_destroy(env);
  CHECK(dir != NULL);
  size_t len = strlen(dir) + strlen(name) + 32;
  char* path = malloc(len);
  CHECK(path != NULL);
  snprintf(path, len, "%s/%s-%d", dir, name, (int)getpid());
  leveldb_free(dir);
  return path;
}

/* Checks that key reads back as `expected` (NUL-terminated), or is missing when NULL. */
static inline void check_get(leveldb_t* db, const leveldb_readoptions_t* ro, const char* key,
                      const char* expected) {
  char* err = NULL;
  size_t len = 12345;
  char* value = leveldb_get(db, ro, key, strlen(key), &len, &err);
  CHECK_OK(err);
  if (expected == NULL) {
    if (value != NULL) {
      fprintf(stderr, "key %s: expected missing, got %.*s\n", key, (int)len, value);
      exit(1);
    }
    CHECK(len == 0);
    return;
  }
  if (value == NULL) {
    fprintf(stderr, "key %s: expected %s, got missing\n", key, expected);
    exit(1);
  }
  if (len != strlen(expected) || memcmp(value, expected, len) != 0) {
    fprintf(stderr, "key %s: expected %s, got %.*s\n", key, expected, (int)len, value);
    exit(1);
  }
  leveldb_free(value);
}

/* Checks that the iterator is valid at key/val (both NUL-terminated). */
static inline void check_iter(const leveldb_iterator_t* it, const char* key, const char* val) {
  size_t len;
  CHECK(leveldb_iter_valid(it));
  const char* k = leveldb_iter_key(it, &len);
  if (len != strlen(key) || memcmp(k, key, len) != 0) {
    fprintf(stderr, "iterator key: expected %s, got %.*s\n", key, (int)len, k);
    exit(1);
  }
  const char* v = leveldb_iter_value(it, &len);
  if (len != strlen(val) || memcmp(v, val, len) != 0) {
    fprintf(stderr, "iterator value at %s: expected %s, got %.*s\n", key, val, (int)len, v);
    exit(1);
  }
}

/* Puts a NUL-terminated key and value. */
static inline void put(leveldb_t* db, const leveldb_writeoptions_t* wo, const char* k, const char* v) {
  char* err = NULL;
  leveldb_put(db, wo, k, strlen(k), v, strlen(v), &err);
  CHECK_OK(err);
}

/* Removes the database at path, which must succeed. */
static inline void destroy(const char* path) {
  char* err = NULL;
  leveldb_options_t* options = leveldb_options_create();
  leveldb_destroy_db(options, path, &err);
  CHECK_OK(err);
  leveldb_options_destroy(options);
}

static inline void passed(const char* test) {
  fprintf(stderr, "%s: %d sections passed\n", test, checks_sections);
}

#endif
