package io.github.stratakv;

import static io.github.stratakv.TestSupport.bytes;
import static io.github.stratakv.TestSupport.entries;
import static io.github.stratakv.TestSupport.open;
import static io.github.stratakv.TestSupport.string;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.ReadOptions;
import org.iq80.leveldb.Snapshot;
import org.iq80.leveldb.WriteBatch;
import org.iq80.leveldb.WriteOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code WriteBatch} and {@code Snapshot}. */
class BatchAndSnapshotTest {
    @TempDir Path dir;

    @Test
    void aBatchAppliesAllItsUpdatesInOrder() throws IOException {
        try (DB db = open(dir); WriteBatch batch = db.createWriteBatch()) {
            db.put(bytes("gone"), bytes("x"));
            batch.put(bytes("a"), bytes("1")).put(bytes("b"), bytes("2")).delete(bytes("gone"));
            batch.put(bytes("a"), bytes("3"));
            assertNull(db.get(bytes("a")), "nothing is applied before write");
            db.write(batch);
            assertEquals(List.of("a=3", "b=2"), entries(db));
            db.delete(bytes("b"));
            db.write(batch, new WriteOptions().sync(true));
            assertEquals(List.of("a=3", "b=2"), entries(db), "a batch can be written again");
        }
    }

    @Test
    void aClosedBatchIsRefused() throws IOException {
        try (DB db = open(dir)) {
            WriteBatch batch = db.createWriteBatch();
            batch.put(bytes("a"), bytes("1"));
            batch.close();
            batch.close();
            assertEquals("the write batch is closed",
                    assertThrows(DBException.class, () -> batch.put(bytes("b"), bytes("2"))).getMessage());
            assertThrows(DBException.class, () -> batch.delete(bytes("b")));
            assertThrows(DBException.class, () -> db.write(batch));
            assertNull(db.get(bytes("a")));
        }
    }

    @Test
    void aBatchOfAnotherImplementationIsRefused() throws IOException {
        WriteBatch foreign = new WriteBatch() {
            @Override
            public WriteBatch put(byte[] key, byte[] value) {
                return this;
            }

            @Override
            public WriteBatch delete(byte[] key) {
                return this;
            }

            @Override
            public void close() {}
        };
        try (DB db = open(dir)) {
            assertTrue(assertThrows(DBException.class, () -> db.write(foreign)).getMessage().startsWith("not a batch"));
        }
    }

    @Test
    void snapshotsIsolateReadsAndIterators() throws IOException {
        try (DB db = open(dir)) {
            db.put(bytes("a"), bytes("old"));
            db.put(bytes("b"), bytes("old"));
            try (Snapshot snapshot = db.getSnapshot()) {
                db.put(bytes("a"), bytes("new"));
                db.delete(bytes("b"));
                db.put(bytes("c"), bytes("new"));
                db.compactRange(null, null);
                ReadOptions at = new ReadOptions().snapshot(snapshot);
                assertEquals("old", string(db.get(bytes("a"), at)));
                assertEquals("old", string(db.get(bytes("b"), at)));
                assertNull(db.get(bytes("c"), at));
                assertEquals("new", string(db.get(bytes("a"))));
                try (DBIterator it = db.iterator(at)) {
                    assertEquals("a", string(it.next().getKey()));
                    assertEquals("b", string(it.next().getKey()));
                    assertTrue(!it.hasNext());
                }
            }
        }
    }

    @Test
    void aClosedSnapshotIsRefused() throws IOException {
        try (DB db = open(dir)) {
            Snapshot snapshot = db.getSnapshot();
            snapshot.close();
            snapshot.close();
            ReadOptions at = new ReadOptions().snapshot(snapshot);
            assertEquals("the snapshot is closed",
                    assertThrows(DBException.class, () -> db.get(bytes("a"), at)).getMessage());
            assertThrows(DBException.class, () -> db.iterator(at));
        }
    }

    @Test
    void aSnapshotOfAnotherDatabaseIsRefused() throws IOException {
        try (DB one = open(dir.resolve("one")); DB two = open(dir.resolve("two"));
                Snapshot snapshot = one.getSnapshot()) {
            ReadOptions at = new ReadOptions().snapshot(snapshot);
            assertEquals("the snapshot belongs to another database",
                    assertThrows(DBException.class, () -> two.get(bytes("a"), at)).getMessage());
            assertThrows(DBException.class, () -> two.iterator(at));
            assertNull(one.get(bytes("a"), at));
        }
    }

    @Test
    void aSnapshotOfAnotherImplementationIsRefused() throws IOException {
        try (DB db = open(dir)) {
            ReadOptions at = new ReadOptions().snapshot(() -> {});
            assertTrue(assertThrows(DBException.class, () -> db.get(bytes("a"), at)).getMessage().startsWith("not a snapshot"));
        }
    }

    @Test
    void aSnapshotOutlivingItsDatabaseIsHarmless() throws IOException {
        DB db = open(dir);
        Snapshot snapshot = db.getSnapshot();
        db.close();
        assertThrows(DBException.class, () -> db.get(bytes("a"), new ReadOptions().snapshot(snapshot)));
        snapshot.close();
    }
}
