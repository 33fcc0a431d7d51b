/* A program written for LevelDB's C API and built against Debian's LevelDB (libleveldb-dev),
 * with nothing of Strata in sight. tests/release/c-library.sh runs this one binary on LevelDB,
 * then on Strata through LD_LIBRARY_PATH (Strata's libleveldb.so.1d), then on LevelDB again.
 *
 *   leveldb_program DIR NAME
 *
 * prints "loaded FILE" for each LevelDB or Strata library mapped in the process (from
 * /proc/self/maps, symlinks resolved), opens the database in DIR (creating it), prints every
 * entry as "KEY=VALUE" in key order, then puts NAME=FILE, FILE being the library it ran on. */
#include <leveldb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die_on(char* err, const char* what) {
  if (err != NULL) {
    fprintf(stderr, "%s: %s\n", what, err);
    exit(1);
  }
}

/* Prints the LevelDB-or-Strata files mapped in this process; keeps the last in `library`. */
static void print_loaded(char* library, size_t size) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) {
    perror("/proc/self/maps");
    exit(1);
  }
  char line[4096];
  char last[4096] = "";
  library[0] = '\0';
  while (fgets(line, sizeof line, maps) != NULL) {
    char* path = strchr(line, '/');
    if (path == NULL) continue;
    path[strcspn(path, "\n")] = '\0';
    const char* base = strrchr(path, '/') + 1;
    if (strncmp(base, "libleveldb", 10) != 0 && strncmp(base, "libstrata", 9) != 0) continue;
    if (strcmp(path, last) == 0) continue; /* one line per file, not per segment */
    snprintf(last, sizeof last, "%s", path);
    printf("loaded %s\n", path);
    snprintf(library, size, "%s", path);
  }
  fclose(maps);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s DIR NAME\n", argv[0]);
    return 2;
  }
  char library[4096];
  print_loaded(library, sizeof library);
  if (library[0] == '\0') {
    fprintf(stderr, "no LevelDB library is mapped\n");
    return 1;
  }

  char* err = NULL;
  leveldb_options_t* options = leveldb_options_create();
  leveldb_options_set_create_if_missing(options, 1);
  leveldb_t* db = leveldb_open(options, argv[1], &err);
  die_on(err, "open");

  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  leveldb_iterator_t* it = leveldb_create_iterator(db, ro);
  for (leveldb_iter_seek_to_first(it); leveldb_iter_valid(it); leveldb_iter_next(it)) {
    size_t klen, vlen;
    const char* key = leveldb_iter_key(it, &klen);
    const char* value = leveldb_iter_value(it, &vlen);
    printf("%.*s=%.*s\n", (int)klen, key, (int)vlen, value);
  }
  leveldb_iter_get_error(it, &err);
  die_on(err, "iterate");
  leveldb_iter_destroy(it);
  leveldb_readoptions_destroy(ro);

  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_writeoptions_set_sync(wo, 1);
  leveldb_put(db, wo, argv[2], strlen(argv[2]), library, strlen(library), &err);
  die_on(err, "put");
  leveldb_writeoptions_destroy(wo);

  leveldb_close(db);
  leveldb_options_destroy(options);
  return 0;
}
