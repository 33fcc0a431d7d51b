"""The writer of readers_beside_a_writer.rs in real LevelDB (Debian's python3-plyvel).

Writes the same workload as the Rust writer, batch by batch, and after each batch records in
the progress file how many writes LevelDB acknowledged; flushes happen on their own (a 64 KiB
write buffer), a full compaction runs every 200 batches, and every 500 batches the database is
closed and opened again (LevelDB recovers its log into a table and starts a new manifest).
Stops when the stop file appears.

Usage: leveldb_writer.py DB_DIR PROGRESS_FILE STOP_FILE
"""

import os
import sys

import plyvel

# Keep in step with readers_beside_a_writer.rs.
KEYS = 2000
BATCH = 8


def key(j):
    return b"k%05d" % (j % KEYS)


def value(j):
    return b"v%d-" % j + b"x" * (j % 173)


def is_delete(j):
    return j % 11 == 5


def main():
    path, progress, stop = sys.argv[1:4]
    def open_db():
        return plyvel.DB(path, create_if_missing=True, write_buffer_size=64 << 10)

    db = open_db()
    batch_number = 0
    while not os.path.exists(stop):
        with db.write_batch() as batch:
            for j in range(batch_number * BATCH, (batch_number + 1) * BATCH):
                if is_delete(j):
                    batch.delete(key(j))
                else:
                    batch.put(key(j), value(j))
        batch_number += 1
        temporary = progress + ".tmp"
        with open(temporary, "w") as f:
            f.write(str(batch_number * BATCH))
        os.replace(temporary, progress)
        if batch_number % 200 == 0:
            db.compact_range()
        if batch_number % 500 == 0:
            db.close()
            db = open_db()
    db.close()


if __name__ == "__main__":
    main()
