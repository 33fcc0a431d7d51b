// C trampolines between Strata's C API callbacks and the Go functions exported in
// callbacks.go. The callback state of a Go comparator or filter policy is a small C struct
// holding the cgo handle of the Go value and the NUL-terminated name.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <leveldb/c.h>

#include "_cgo_export.h"

typedef struct {
  uintptr_t handle;
  char* name;
} strata_go_state;

static void* new_state(uintptr_t handle, const char* name) {
  strata_go_state* state = malloc(sizeof *state);
  if (state == NULL) return NULL;
  state->handle = handle;
  state->name = strdup(name);
  return state;
}

// Runs once the library no longer uses the comparator or policy: frees the Go handle too.
static void destroy_state(void* arg) {
  strata_go_state* state = arg;
  strataGoRelease(state->handle);
  free(state->name);
  free(state);
}

static const char* state_name(void* arg) { return ((strata_go_state*)arg)->name; }

static uintptr_t handle_of(void* arg) { return ((strata_go_state*)arg)->handle; }

static int compare(void* arg, const char* a, size_t alen, const char* b, size_t blen) {
  return strataGoCompare(handle_of(arg), (char*)a, alen, (char*)b, blen);
}

leveldb_comparator_t* strata_go_comparator_create(uintptr_t handle, const char* name) {
  void* state = new_state(handle, name);
  if (state == NULL) return NULL;
  return leveldb_comparator_create(state, destroy_state, compare, state_name);
}

static char* create_filter(void* arg, const char* const* keys, const size_t* lens, int n,
                           size_t* filter_len) {
  return strataGoCreateFilter(handle_of(arg), (char**)keys, (size_t*)lens, n, filter_len);
}

static uint8_t key_may_match(void* arg, const char* key, size_t len, const char* filter,
                             size_t filter_len) {
  return strataGoKeyMayMatch(handle_of(arg), (char*)key, len, (char*)filter, filter_len);
}

leveldb_filterpolicy_t* strata_go_filterpolicy_create(uintptr_t handle, const char* name) {
  void* state = new_state(handle, name);
  if (state == NULL) return NULL;
  return leveldb_filterpolicy_create(state, destroy_state, create_filter, key_may_match,
                                     state_name);
}

static void batch_put(void* arg, const char* k, size_t klen, const char* v, size_t vlen) {
  strataGoBatchPut((uintptr_t)arg, (char*)k, klen, (char*)v, vlen);
}

static void batch_delete(void* arg, const char* k, size_t klen) {
  strataGoBatchDelete((uintptr_t)arg, (char*)k, klen);
}

void strata_go_writebatch_iterate(const leveldb_writebatch_t* b, uintptr_t handle) {
  leveldb_writebatch_iterate(b, (void*)handle, batch_put, batch_delete);
}
