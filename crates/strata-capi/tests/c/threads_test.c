/* One database used from several threads at once: writers, readers and iterators. */
#include <pthread.h>

#include "check.h"

enum { THREADS = 4, KEYS_PER_THREAD = 400 };

static leveldb_t* db;

static void* writer_reader(void* arg) {
  int id = (int)(long)arg;
  char* err = NULL;
  char key[32], val[32];
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  for (int i = 0; i < KEYS_PER_THREAD; i++) {
    snprintf(key, sizeof key, "t%d-%04d", id, i);
    snprintf(val, sizeof val, "value-%d-%d", id, i);
    if (i % 10 == 0) {
      leveldb_writebatch_t* b = leveldb_writebatch_create();
      leveldb_writebatch_put(b, key, strlen(key), val, strlen(val));
      leveldb_write(db, wo, b, &err);
      leveldb_writebatch_destroy(b);
    } else {
      leveldb_put(db, wo, key, strlen(key), val, strlen(val), &err);
    }
    CHECK_OK(err);
    check_get(db, ro, key, val); /* a thread reads its own writes */
  }
  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
  return NULL;
}

/* Scans repeatedly while the writers run; every scan must be sorted. */
static void* scanner(void* arg) {
  (void)arg;
  for (int round = 0; round < 20; round++) {
    leveldb_readoptions_t* ro = leveldb_readoptions_create();
    leveldb_iterator_t* it = leveldb_create_iterator(db, ro);
    char prev[64] = "";
    size_t prev_len = 0;
    for (leveldb_iter_seek_to_first(it); leveldb_iter_valid(it); leveldb_iter_next(it)) {
      size_t len;
      const char* k = leveldb_iter_key(it, &len);
      CHECK(len < sizeof prev);
      size_t n = len < prev_len ? len : prev_len;
      int c = memcmp(prev, k, n);
      CHECK(c < 0 || (c == 0 && prev_len < len));
      memcpy(prev, k, len);
      prev_len = len;
    }
    char* err = NULL;
    leveldb_iter_get_error(it, &err);
    CHECK_OK(err);
    leveldb_iter_destroy(it);
    leveldb_readoptions_destroy(ro);
  }
  return NULL;
}

int main(void) {
  section("concurrent writers, readers and scanners");
  char* path = db_path("threads");
  char* err = NULL;
  leveldb_options_t* o = leveldb_options_create();
  leveldb_options_set_create_if_missing(o, 1);
  leveldb_options_set_write_buffer_size(o, 64 << 10); /* flushes while the threads run */
  db = leveldb_open(o, path, &err);
  CHECK_OK(err);

  pthread_t threads[THREADS + 1];
  for (long t = 0; t < THREADS; t++) {
    CHECK(pthread_create(&threads[t], NULL, writer_reader, (void*)t) == 0);
  }
  CHECK(pthread_create(&threads[THREADS], NULL, scanner, NULL) == 0);
  for (int t = 0; t <= THREADS; t++) CHECK(pthread_join(threads[t], NULL) == 0);

  int count = 0;
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  leveldb_iterator_t* it = leveldb_create_iterator(db, ro);
  for (leveldb_iter_seek_to_first(it); leveldb_iter_valid(it); leveldb_iter_next(it)) count++;
  leveldb_iter_destroy(it);
  leveldb_readoptions_destroy(ro);
  CHECK(count == THREADS * KEYS_PER_THREAD);

  leveldb_close(db);
  leveldb_options_destroy(o);
  destroy(path);
  free(path);
  passed("threads_test");
  return 0;
}
