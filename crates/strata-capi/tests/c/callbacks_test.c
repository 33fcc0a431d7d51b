/* Comparators and filter policies made of C callbacks, and the built-in bloom filter. */
#include "check.h"

/* ---- A comparator ordering keys backwards, counting its calls ---- */

static int reverse_destroyed = 0;
static long reverse_compares = 0;

static void reverse_destructor(void* state) {
  CHECK(state == &reverse_compares);
  reverse_destroyed++;
}

static int reverse_compare(void* state, const char* a, size_t alen, const char* b, size_t blen) {
  (void)state;
  __atomic_add_fetch(&reverse_compares, 1, __ATOMIC_RELAXED); /* also runs on a background thread */
  size_t n = alen < blen ? alen : blen;
  int r = memcmp(a, b, n);
  if (r == 0) r = (alen < blen) ? -1 : (alen > blen) ? 1 : 0;
  return -r;
}

static const char* reverse_name(void* state) {
  (void)state;
  return "strata-test.Reverse";
}

static void test_comparator(void) {
  section("custom comparator");
  char* path = db_path("comparator");
  char* err = NULL;
  leveldb_comparator_t* cmp =
      leveldb_comparator_create(&reverse_compares, reverse_destructor, reverse_compare, reverse_name);
  CHECK(cmp != NULL);
  leveldb_options_t* o = leveldb_options_create();
  leveldb_options_set_create_if_missing(o, 1);
  leveldb_options_set_comparator(o, cmp);
  leveldb_t* db = leveldb_open(o, path, &err);
  CHECK_OK(err);
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  put(db, wo, "apple", "1");
  put(db, wo, "banana", "2");
  put(db, wo, "cherry", "3");
  leveldb_compact_range(db, NULL, 0, NULL, 0); /* tables ordered by the callback */
  put(db, wo, "date", "4");                    /* and one still in memory */

  leveldb_iterator_t* it = leveldb_create_iterator(db, ro);
  leveldb_iter_seek_to_first(it);
  check_iter(it, "date", "4");
  leveldb_iter_next(it);
  check_iter(it, "cherry", "3");
  leveldb_iter_next(it);
  check_iter(it, "banana", "2");
  leveldb_iter_next(it);
  check_iter(it, "apple", "1");
  leveldb_iter_next(it);
  CHECK(!leveldb_iter_valid(it));
  leveldb_iter_seek(it, "c", 1); /* first key "after" c in reverse order */
  check_iter(it, "banana", "2");
  leveldb_iter_seek_to_last(it);
  check_iter(it, "apple", "1");
  leveldb_iter_destroy(it);
  check_get(db, ro, "cherry", "3");
  CHECK(reverse_compares > 0);
  leveldb_close(db);

  /* Reopening under another comparator name is refused. */
  leveldb_options_t* bytewise = leveldb_options_create();
  db = leveldb_open(bytewise, path, &err);
  CHECK(db == NULL);
  CHECK_ERR(err, "strata-test.Reverse");
  leveldb_options_destroy(bytewise);

  if (STRATA_EXTENSIONS) {
    /* The destructor runs once, when nothing uses the comparator any more. */
    leveldb_comparator_destroy(cmp);
    CHECK(reverse_destroyed == 0); /* still held by the options */
    db = leveldb_open(o, path, &err);
    CHECK_OK(err);
    check_get(db, ro, "apple", "1");
    leveldb_options_destroy(o);
    CHECK(reverse_destroyed == 0); /* still held by the database */
    leveldb_close(db);
    CHECK(reverse_destroyed == 1);

    /* Required callbacks missing: no comparator. */
    CHECK(leveldb_comparator_create(NULL, NULL, NULL, reverse_name) == NULL);
    CHECK(leveldb_comparator_create(NULL, NULL, reverse_compare, NULL) == NULL);
    leveldb_comparator_destroy(NULL);
  } else {
    leveldb_options_destroy(o);
    leveldb_comparator_destroy(cmp);
    CHECK(reverse_destroyed == 1);
  }

  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
  destroy(path);
  free(path);
}

/* ---- A filter policy whose filter is the list of its keys ---- */

typedef struct {
  int created;      /* create_filter calls */
  int probed;       /* key_may_match calls */
  int say_no;       /* when set, key_may_match answers "absent" for everything */
  int destroyed;
} list_filter;

static void list_destructor(void* state) { ((list_filter*)state)->destroyed++; }

/* Filter layout: for each key, a 1-byte length then the key (keys here are short). */
static char* list_create(void* state, const char* const* keys, const size_t* lens, int n,
                         size_t* filter_len) {
  list_filter* f = state;
  __atomic_add_fetch(&f->created, 1, __ATOMIC_RELAXED);
  size_t total = 0;
  for (int i = 0; i < n; i++) total += 1 + lens[i];
  char* out = malloc(total == 0 ? 1 : total);
  size_t pos = 0;
  for (int i = 0; i < n; i++) {
    CHECK(lens[i] < 256);
    out[pos++] = (char)lens[i];
    memcpy(out + pos, keys[i], lens[i]);
    pos += lens[i];
  }
  *filter_len = total;
  return out;
}

static uint8_t list_may_match(void* state, const char* key, size_t len, const char* filter,
                              size_t filter_len) {
  list_filter* f = state;
  __atomic_add_fetch(&f->probed, 1, __ATOMIC_RELAXED);
  if (__atomic_load_n(&f->say_no, __ATOMIC_RELAXED)) return 0;
  size_t pos = 0;
  while (pos < filter_len) {
    size_t n = (unsigned char)filter[pos++];
    if (n == len && pos + n <= filter_len && memcmp(filter + pos, key, n) == 0) return 1;
    pos += n;
  }
  return 0;
}

static const char* list_name(void* state) {
  (void)state;
  return "strata-test.ListFilter";
}

static void test_filter_policy(void) {
  section("custom filter policy");
  char* path = db_path("filter");
  char* err = NULL;
  list_filter state = {0, 0, 0, 0};
  leveldb_filterpolicy_t* policy =
      leveldb_filterpolicy_create(&state, list_destructor, list_create, list_may_match, list_name);
  CHECK(policy != NULL);
  leveldb_options_t* o = leveldb_options_create();
  leveldb_options_set_create_if_missing(o, 1);
  leveldb_options_set_filter_policy(o, policy);
  leveldb_t* db = leveldb_open(o, path, &err);
  CHECK_OK(err);
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  put(db, wo, "foo", "foovalue");
  put(db, wo, "bar", "barvalue");
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  CHECK(state.created > 0);

  check_get(db, ro, "foo", "foovalue");
  check_get(db, ro, "bar", "barvalue");
  check_get(db, ro, "baz", NULL);
  CHECK(state.probed > 0);

  /* The filter is consulted: when it says "absent", the table is not read. */
  state.say_no = 1;
  check_get(db, ro, "foo", NULL);
  check_get(db, ro, "bar", NULL);
  state.say_no = 0;
  check_get(db, ro, "foo", "foovalue");

  leveldb_close(db);
  leveldb_options_destroy(o);
  CHECK(state.destroyed == 0);
  leveldb_filterpolicy_destroy(policy);
  CHECK(state.destroyed == 1);

  if (STRATA_EXTENSIONS) { /* required callbacks missing: no policy */
    CHECK(leveldb_filterpolicy_create(NULL, NULL, NULL, list_may_match, list_name) == NULL);
    CHECK(leveldb_filterpolicy_create(NULL, NULL, list_create, NULL, list_name) == NULL);
    CHECK(leveldb_filterpolicy_create(NULL, NULL, list_create, list_may_match, NULL) == NULL);
    leveldb_filterpolicy_destroy(NULL);
  }

  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
  destroy(path);
  free(path);
}

static void test_bloom_filter(void) {
  section("bloom filter and cache");
  char* path = db_path("bloom");
  char* err = NULL;
  leveldb_filterpolicy_t* bloom = leveldb_filterpolicy_create_bloom(10);
  leveldb_cache_t* cache = leveldb_cache_create_lru(64 << 10);
  leveldb_options_t* o = leveldb_options_create();
  leveldb_options_set_create_if_missing(o, 1);
  leveldb_options_set_filter_policy(o, bloom);
  leveldb_options_set_cache(o, cache);
  leveldb_t* db = leveldb_open(o, path, &err);
  CHECK_OK(err);
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  char key[32], val[32];
  for (int i = 0; i < 2000; i++) {
    snprintf(key, sizeof key, "k%05d", i * 2); /* even numbers only */
    snprintf(val, sizeof val, "v%d", i);
    put(db, wo, key, val);
  }
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  for (int i = 0; i < 4000; i += 7) {
    snprintf(key, sizeof key, "k%05d", i);
    snprintf(val, sizeof val, "v%d", i / 2);
    check_get(db, ro, key, (i % 2 == 0) ? val : NULL);
  }
  leveldb_close(db);

  /* Reopened with another bits-per-key: same filter name, so the filters still serve. */
  leveldb_filterpolicy_destroy(bloom);
  bloom = leveldb_filterpolicy_create_bloom(-3); /* clipped, still a valid policy */
  CHECK(bloom != NULL);
  leveldb_options_set_filter_policy(o, bloom);
  db = leveldb_open(o, path, &err);
  CHECK_OK(err);
  check_get(db, ro, "k00100", "v50");
  check_get(db, ro, "k00101", NULL);
  leveldb_close(db);

  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
  leveldb_options_destroy(o);
  leveldb_filterpolicy_destroy(bloom);
  leveldb_cache_destroy(cache);
  destroy(path);
  free(path);
}

int main(void) {
  test_comparator();
  test_filter_policy();
  test_bloom_filter();
  passed("callbacks_test");
  return 0;
}
