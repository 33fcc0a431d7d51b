/* Write batches (put, delete, clear, append, iterate, write), iterators in both directions
 * with their edge cases, snapshots, and read options. */
#include "check.h"

/* Records what leveldb_writebatch_iterate reports, as "put(k,v)" / "del(k)" items. */
typedef struct {
  char log[1024];
  int puts;
  int dels;
} recorder;

static void record_put(void* state, const char* k, size_t klen, const char* v, size_t vlen) {
  recorder* r = state;
  size_t used = strlen(r->log);
  snprintf(r->log + used, sizeof r->log - used, "put(%.*s,%.*s)", (int)klen, k, (int)vlen, v);
  r->puts++;
}

static void record_del(void* state, const char* k, size_t klen) {
  recorder* r = state;
  size_t used = strlen(r->log);
  snprintf(r->log + used, sizeof r->log - used, "del(%.*s)", (int)klen, k);
  r->dels++;
}

static void test_write_batch(leveldb_t* db) {
  section("write batch");
  char* err = NULL;
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  put(db, wo, "gone", "soon");

  leveldb_writebatch_t* b = leveldb_writebatch_create();
  leveldb_writebatch_put(b, "a", 1, "1", 1);
  leveldb_writebatch_clear(b);
  leveldb_writebatch_put(b, "b", 1, "2", 1);
  leveldb_writebatch_delete(b, "gone", 4);
  leveldb_writebatch_put(b, "c", 1, "3", 1);
  leveldb_writebatch_put(b, "b", 1, "22", 2); /* later updates win */

  recorder r = {{0}, 0, 0};
  leveldb_writebatch_iterate(b, &r, record_put, record_del);
  CHECK(strcmp(r.log, "put(b,2)del(gone)put(c,3)put(b,22)") == 0);
  CHECK(r.puts == 3 && r.dels == 1);

  leveldb_write(db, wo, b, &err);
  CHECK_OK(err);
  check_get(db, ro, "a", NULL);
  check_get(db, ro, "b", "22");
  check_get(db, ro, "c", "3");
  check_get(db, ro, "gone", NULL);

  /* The batch is unchanged by the write and can be written again after more updates. */
  leveldb_writebatch_put(b, "d", 1, "4", 1);
  leveldb_write(db, wo, b, &err);
  CHECK_OK(err);
  check_get(db, ro, "d", "4");

  /* Append: the source's updates follow the destination's; the source is unchanged. */
  leveldb_writebatch_t* dst = leveldb_writebatch_create();
  leveldb_writebatch_t* src = leveldb_writebatch_create();
  leveldb_writebatch_put(dst, "x", 1, "from-dst", 8);
  leveldb_writebatch_put(src, "x", 1, "from-src", 8);
  leveldb_writebatch_delete(src, "d", 1);
  leveldb_writebatch_append(dst, src);
  memset(&r, 0, sizeof r);
  leveldb_writebatch_iterate(dst, &r, record_put, record_del);
  CHECK(strcmp(r.log, "put(x,from-dst)put(x,from-src)del(d)") == 0);
  memset(&r, 0, sizeof r);
  leveldb_writebatch_iterate(src, &r, record_put, record_del);
  CHECK(strcmp(r.log, "put(x,from-src)del(d)") == 0);
  leveldb_writebatch_append(src, src); /* a batch appended to itself doubles */
  memset(&r, 0, sizeof r);
  leveldb_writebatch_iterate(src, &r, record_put, record_del);
  CHECK(strcmp(r.log, "put(x,from-src)del(d)put(x,from-src)del(d)") == 0);
  leveldb_write(db, wo, dst, &err);
  CHECK_OK(err);
  check_get(db, ro, "x", "from-src");
  check_get(db, ro, "d", NULL);

  if (STRATA_EXTENSIONS) { /* NULL callbacks skip their kind */
    memset(&r, 0, sizeof r);
    leveldb_writebatch_iterate(dst, &r, NULL, record_del);
    CHECK(strcmp(r.log, "del(d)") == 0);
  }
  /* An empty batch writes nothing. */
  leveldb_writebatch_clear(dst);
  memset(&r, 0, sizeof r);
  leveldb_writebatch_iterate(dst, &r, record_put, record_del);
  CHECK(r.puts == 0 && r.dels == 0);
  leveldb_write(db, wo, dst, &err);
  CHECK_OK(err);

  if (STRATA_EXTENSIONS) { /* errors and NULLs */
    leveldb_write(db, wo, NULL, &err);
    CHECK_ERR(err, "Invalid argument");
    leveldb_write(NULL, wo, b, &err);
    CHECK_ERR(err, "Invalid argument");
    leveldb_writebatch_put(NULL, "k", 1, "v", 1);
    leveldb_writebatch_delete(NULL, "k", 1);
    leveldb_writebatch_clear(NULL);
    leveldb_writebatch_append(NULL, src);
    leveldb_writebatch_iterate(NULL, &r, record_put, record_del);
    leveldb_writebatch_destroy(NULL);
  }

  leveldb_writebatch_destroy(src);
  leveldb_writebatch_destroy(dst);
  leveldb_writebatch_destroy(b);
  /* Clean up for the iterator tests: leave exactly b, c, x. */
  leveldb_writebatch_t* reset = leveldb_writebatch_create();
  leveldb_writebatch_delete(reset, "b", 1);
  leveldb_writebatch_delete(reset, "c", 1);
  leveldb_writebatch_delete(reset, "x", 1);
  leveldb_write(db, wo, reset, &err);
  CHECK_OK(err);
  leveldb_writebatch_destroy(reset);
  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
}

static void test_iterators(leveldb_t* db) {
  section("iterators");
  char* err = NULL;
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();

  /* An empty database: every positioning ends invalid. */
  leveldb_iterator_t* it = leveldb_create_iterator(db, ro);
  CHECK(!leveldb_iter_valid(it)); /* unpositioned */
  leveldb_iter_seek_to_first(it);
  CHECK(!leveldb_iter_valid(it));
  leveldb_iter_seek_to_last(it);
  CHECK(!leveldb_iter_valid(it));
  leveldb_iter_seek(it, "m", 1);
  CHECK(!leveldb_iter_valid(it));
  leveldb_iter_get_error(it, &err);
  CHECK_OK(err);
  leveldb_iter_destroy(it);

  put(db, wo, "box", "1");
  put(db, wo, "cat", "2");
  put(db, wo, "dog", "3");
  const char bin[] = {'e', 0};
  leveldb_put(db, wo, bin, 2, "4", 1, &err);
  CHECK_OK(err);

  it = leveldb_create_iterator(db, ro);
  /* Writes after creation are invisible to the iterator. */
  put(db, wo, "ant", "0");
  leveldb_delete(db, wo, "cat", 3, &err);
  CHECK_OK(err);

  leveldb_iter_seek_to_first(it);
  check_iter(it, "box", "1");
  leveldb_iter_next(it);
  check_iter(it, "cat", "2");
  leveldb_iter_next(it);
  check_iter(it, "dog", "3");
  leveldb_iter_next(it);
  CHECK(leveldb_iter_valid(it));
  size_t klen;
  const char* k = leveldb_iter_key(it, &klen);
  CHECK(klen == 2 && k[0] == 'e' && k[1] == 0); /* a key holding a NUL byte */
  leveldb_iter_next(it);
  CHECK(!leveldb_iter_valid(it)); /* past the end */

  leveldb_iter_seek_to_last(it);
  CHECK(leveldb_iter_valid(it));
  leveldb_iter_prev(it);
  check_iter(it, "dog", "3");
  leveldb_iter_prev(it);
  check_iter(it, "cat", "2");
  leveldb_iter_next(it); /* change of direction */
  check_iter(it, "dog", "3");
  leveldb_iter_prev(it);
  leveldb_iter_prev(it);
  check_iter(it, "box", "1");
  leveldb_iter_prev(it);
  CHECK(!leveldb_iter_valid(it)); /* before the start */

  leveldb_iter_seek(it, "c", 1); /* between keys: the next one */
  check_iter(it, "cat", "2");
  leveldb_iter_seek(it, "cat", 3); /* exact */
  check_iter(it, "cat", "2");
  leveldb_iter_seek(it, "", 0); /* before everything */
  check_iter(it, "box", "1");
  leveldb_iter_seek(it, "zzz", 3); /* after everything */
  CHECK(!leveldb_iter_valid(it));
  leveldb_iter_get_error(it, &err);
  CHECK_OK(err);
  leveldb_iter_destroy(it);

  /* A new iterator sees the later writes. */
  it = leveldb_create_iterator(db, ro);
  leveldb_iter_seek_to_first(it);
  check_iter(it, "ant", "0");
  leveldb_iter_next(it);
  check_iter(it, "box", "1");
  leveldb_iter_next(it);
  check_iter(it, "dog", "3");
  leveldb_iter_destroy(it);

  if (STRATA_EXTENSIONS) { /* NULL iterators are harmless */
    CHECK(leveldb_create_iterator(NULL, ro) == NULL);
    CHECK(!leveldb_iter_valid(NULL));
    leveldb_iter_seek_to_first(NULL);
    leveldb_iter_next(NULL);
    leveldb_iter_prev(NULL);
    size_t vlen = 9;
    leveldb_iter_value(NULL, &vlen);
    CHECK(vlen == 0);
    leveldb_iter_get_error(NULL, &err);
    CHECK_OK(err);
    leveldb_iter_destroy(NULL);
  }

  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
}

static void test_snapshots(leveldb_t* db) {
  section("snapshots");
  char* err = NULL;
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  put(db, wo, "snap", "before");

  const leveldb_snapshot_t* snap = leveldb_create_snapshot(db);
  CHECK(snap != NULL);
  put(db, wo, "snap", "after");
  put(db, wo, "new", "key");
  leveldb_delete(db, wo, "box", 3, &err);
  CHECK_OK(err);

  check_get(db, ro, "snap", "after");
  leveldb_readoptions_set_snapshot(ro, snap);
  check_get(db, ro, "snap", "before");
  check_get(db, ro, "new", NULL);
  check_get(db, ro, "box", "1");

  /* The snapshot survives a compaction that would otherwise drop what it sees. */
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  check_get(db, ro, "snap", "before");
  check_get(db, ro, "box", "1");

  /* An iterator at the snapshot. */
  leveldb_iterator_t* it = leveldb_create_iterator(db, ro);
  leveldb_iter_seek(it, "b", 1);
  check_iter(it, "box", "1");
  leveldb_iter_seek_to_last(it);
  check_iter(it, "snap", "before");
  leveldb_iter_destroy(it);

  leveldb_readoptions_set_snapshot(ro, NULL); /* back to the latest state */
  check_get(db, ro, "snap", "after");
  check_get(db, ro, "box", NULL);
  leveldb_release_snapshot(db, snap);

  snap = leveldb_create_snapshot(db);
  leveldb_readoptions_set_snapshot(ro, snap);
  if (STRATA_EXTENSIONS) {
    /* Options keep a snapshot they name alive even after its release. */
    leveldb_release_snapshot(db, snap);
    snap = NULL;
  }
  put(db, wo, "snap", "latest");
  check_get(db, ro, "snap", "after");
  leveldb_readoptions_set_verify_checksums(ro, 1);
  leveldb_readoptions_set_fill_cache(ro, 0);
  check_get(db, ro, "snap", "after");
  if (snap != NULL) {
    leveldb_readoptions_set_snapshot(ro, NULL);
    leveldb_release_snapshot(db, snap);
  }

  if (STRATA_EXTENSIONS) {
    CHECK(leveldb_create_snapshot(NULL) == NULL);
    leveldb_release_snapshot(db, NULL);
  }
  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
}

int main(void) {
  char* path = db_path("batch_iter");
  char* err = NULL;
  leveldb_options_t* o = leveldb_options_create();
  leveldb_options_set_create_if_missing(o, 1);
  leveldb_t* db = leveldb_open(o, path, &err);
  CHECK_OK(err);
  test_write_batch(db);
  test_iterators(db);
  test_snapshots(db);
  leveldb_close(db);
  leveldb_options_destroy(o);
  destroy(path);
  free(path);
  passed("batch_iter_test");
  return 0;
}
