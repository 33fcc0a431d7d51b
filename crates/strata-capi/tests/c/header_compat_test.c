/* Strata's leveldb/c.h against the one LevelDB 1.23 installs: both are included in one
 * translation unit, so the compiler rejects any function or type whose declaration differs.
 * Built only where LevelDB's header is installed (libleveldb-dev). The harness passes
 * -DSTRATA_HEADER="<path of our c.h>" and no include path for our header, so
 * <leveldb/c.h> below is LevelDB's. */
#include <leveldb/c.h>

/* Our header declares the same compression enumerators; rename ours so the two enum
 * declarations do not collide, then check the values agree. */
#define leveldb_no_compression strata_no_compression
#define leveldb_snappy_compression strata_snappy_compression
#include STRATA_HEADER
#undef leveldb_no_compression
#undef leveldb_snappy_compression

_Static_assert((int)strata_no_compression == (int)leveldb_no_compression, "no compression value");
_Static_assert((int)strata_snappy_compression == (int)leveldb_snappy_compression, "snappy value");

int main(void) {
  /* Linking against libstrata resolves the functions both headers declare. */
  return (leveldb_major_version() == 1 && leveldb_minor_version() == 23) ? 0 : 1;
}
