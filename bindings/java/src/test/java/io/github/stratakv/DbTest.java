package io.github.stratakv;

import static io.github.stratakv.StrataDBFactory.factory;
import static io.github.stratakv.TestSupport.bytes;
import static io.github.stratakv.TestSupport.entries;
import static io.github.stratakv.TestSupport.files;
import static io.github.stratakv.TestSupport.open;
import static io.github.stratakv.TestSupport.string;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.Range;
import org.iq80.leveldb.WriteBatch;
import org.iq80.leveldb.WriteOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code DB} and {@code DBFactory} API: reads, writes, properties, compaction, lifecycle. */
class DbTest {
    @TempDir Path dir;

    @Test
    void putGetDeleteOverwrite() throws IOException {
        try (DB db = open(dir)) {
            assertNull(db.get(bytes("missing")));
            db.put(bytes("k"), bytes("v1"));
            assertEquals("v1", string(db.get(bytes("k"))));
            db.put(bytes("k"), bytes("v2"));
            assertEquals("v2", string(db.get(bytes("k"))));
            db.delete(bytes("k"));
            assertNull(db.get(bytes("k")));
            db.delete(bytes("never-there"));
        }
    }

    @Test
    void emptyBinaryAndLargeKeysAndValues() throws IOException {
        byte[] binaryKey = {0, -1, 127, -128, 0};
        byte[] large = new byte[3 << 20];
        new Random(7).nextBytes(large);
        try (DB db = open(dir)) {
            db.put(new byte[0], new byte[0]);
            db.put(binaryKey, large);
            assertArrayEquals(new byte[0], db.get(new byte[0]));
            assertArrayEquals(large, db.get(binaryKey));
        }
        try (DB db = open(dir)) {
            assertArrayEquals(new byte[0], db.get(new byte[0]));
            assertArrayEquals(large, db.get(binaryKey));
        }
    }

    /**
     * Keys and values around the size of the thread's scratch buffer, through which small ones
     * pass (larger ones take arrays): every call returns exactly what was written, either way.
     */
    @Test
    void keysAndValuesAroundTheScratchSizeTakeEitherPath() throws IOException {
        int capacity = Scratch.CAPACITY;
        int[] sizes = {0, 1, capacity - 2, capacity - 1, capacity, capacity + 1, 2 * capacity};
        Random random = new Random(11);
        List<byte[]> keys = new ArrayList<>();
        List<byte[]> values = new ArrayList<>();
        for (int keySize : sizes) {
            for (int valueSize : sizes) {
                // A two-byte prefix keeps the keys distinct and sorted in the order made.
                byte[] key = new byte[2 + keySize];
                random.nextBytes(key);
                key[0] = (byte) keys.size();
                key[1] = 0;
                byte[] value = new byte[valueSize];
                random.nextBytes(value);
                keys.add(key);
                values.add(value);
            }
        }
        try (DB db = open(dir)) {
            for (int i = 0; i < keys.size(); i++) {
                if (i % 2 == 0) {
                    db.put(keys.get(i), values.get(i));
                } else {
                    try (WriteBatch batch = db.createWriteBatch()) {
                        db.write(batch.put(keys.get(i), values.get(i)));
                    }
                }
            }
            try (DBIterator it = db.iterator()) {
                for (int i = 0; i < keys.size(); i++) {
                    assertArrayEquals(values.get(i), db.get(keys.get(i)), "get of key " + i);
                    Map.Entry<byte[], byte[]> peeked = it.peekNext();
                    Map.Entry<byte[], byte[]> entry = it.next();
                    assertArrayEquals(keys.get(i), peeked.getKey(), "peekNext key " + i);
                    assertArrayEquals(values.get(i), peeked.getValue(), "peekNext value " + i);
                    assertArrayEquals(keys.get(i), entry.getKey(), "next key " + i);
                    assertArrayEquals(values.get(i), entry.getValue(), "next value " + i);
                }
                assertFalse(it.hasNext());
                assertThrows(NoSuchElementException.class, it::next);
            }
            for (int i = 0; i < keys.size(); i++) {
                db.delete(keys.get(i));
                assertNull(db.get(keys.get(i)), "deleted key " + i);
            }
        }
    }

    @Test
    void writesSurviveReopen() throws IOException {
        try (DB db = open(dir)) {
            for (int i = 0; i < 1000; i++) {
                db.put(bytes("key" + i), bytes("value" + i));
            }
            db.delete(bytes("key5"));
        }
        try (DB db = open(dir)) {
            assertEquals("value999", string(db.get(bytes("key999"))));
            assertNull(db.get(bytes("key5")));
            assertEquals(999, entries(db).size());
        }
    }

    @Test
    void writeOptionsSyncAndSnapshot() throws IOException {
        try (DB db = open(dir)) {
            assertNull(db.put(bytes("a"), bytes("1"), new WriteOptions().sync(true)));
            try (var snapshot = db.put(bytes("a"), bytes("2"), new WriteOptions().snapshot(true))) {
                db.put(bytes("a"), bytes("3"));
                assertEquals("2", string(db.get(bytes("a"), new org.iq80.leveldb.ReadOptions().snapshot(snapshot))));
            }
            try (var snapshot = db.delete(bytes("a"), new WriteOptions().sync(true).snapshot(true))) {
                db.put(bytes("a"), bytes("4"));
                assertNull(db.get(bytes("a"), new org.iq80.leveldb.ReadOptions().snapshot(snapshot)));
            }
            assertEquals("4", string(db.get(bytes("a"))));
        }
    }

    @Test
    void propertiesAndApproximateSizes() throws IOException {
        try (DB db = open(dir)) {
            byte[] value = new byte[1000];
            for (int i = 0; i < 10_000; i++) {
                db.put(bytes(String.format("k%06d", i)), value);
            }
            db.compactRange(null, null);
            int files = 0;
            for (int level = 0; level < 7; level++) {
                files += Integer.parseInt(db.getProperty("leveldb.num-files-at-level" + level));
            }
            assertTrue(files > 0, "compacted tables are listed per level");
            assertTrue(db.getProperty("leveldb.stats").contains("Compactions"));
            assertTrue(db.getProperty("leveldb.sstables").contains(".ldb") || db.getProperty("leveldb.sstables").contains("level"));
            assertTrue(Long.parseLong(db.getProperty("leveldb.approximate-memory-usage")) > 0);
            assertNull(db.getProperty("leveldb.no-such-property"));
            long[] sizes = db.getApproximateSizes(
                    new Range(bytes("k000000"), bytes("k005000")),
                    new Range(bytes("k005000"), bytes("k010000")),
                    new Range(bytes("x"), bytes("y")));
            assertEquals(3, sizes.length);
            // 5,000 values of 1,000 bytes (Snappy squeezes zeros, so only a lower bound on a few KiB).
            assertTrue(sizes[0] > 0 && sizes[1] > 0, java.util.Arrays.toString(sizes));
            assertEquals(0, sizes[2]);
        }
    }

    @Test
    void compactRangeDropsDeletedEntries() throws IOException {
        try (DB db = open(dir)) {
            for (int i = 0; i < 20_000; i++) {
                db.put(bytes("key" + i), bytes("value" + i));
            }
            db.compactRange(null, null);
            assertFalse(files(dir, ".ldb").isEmpty());
            for (int i = 0; i < 20_000; i++) {
                db.delete(bytes("key" + i));
            }
            db.compactRange(null, null);
            assertEquals(List.of(), files(dir, ".ldb"), "nothing is left once every key is deleted");
            assertEquals(List.of(), entries(db));
        }
    }

    @Test
    void compactRangeOfPartOfTheKeys() throws IOException {
        try (DB db = open(dir)) {
            for (int i = 0; i < 1000; i++) {
                db.put(bytes(String.format("k%04d", i)), bytes("v" + i));
            }
            db.compactRange(bytes("k0100"), bytes("k0200"));
            db.compactRange(null, bytes("k0500"));
            db.compactRange(bytes("k0500"), null);
            assertEquals(1000, entries(db).size());
        }
    }

    @Test
    void createIfMissingAndErrorIfExists() throws IOException {
        Path db = dir.resolve("db");
        IOException missing = assertThrows(IOException.class,
                () -> factory.open(db.toFile(), new Options().createIfMissing(false)));
        assertTrue(missing.getMessage().contains("does not exist"), missing.getMessage());
        assertTrue(missing.getCause() instanceof DBException);
        factory.open(db.toFile(), new Options().createIfMissing(true)).close();
        IOException exists = assertThrows(IOException.class,
                () -> factory.open(db.toFile(), new Options().errorIfExists(true)));
        assertTrue(exists.getMessage().contains("exists"), exists.getMessage());
        factory.open(db.toFile(), new Options().createIfMissing(false)).close();
    }

    @Test
    void destroyRemovesTheDatabase() throws IOException {
        Path db = dir.resolve("db");
        try (DB d = open(db)) {
            d.put(bytes("a"), bytes("b"));
        }
        factory.destroy(db.toFile(), new Options());
        assertFalse(Files.exists(db.resolve("CURRENT")));
        try (DB d = open(db)) {
            assertNull(d.get(bytes("a")));
        }
    }

    @Test
    void destroyOfAnOpenDatabaseFails() throws IOException {
        try (DB d = open(dir)) {
            d.put(bytes("a"), bytes("b"));
            assertThrows(IOException.class, () -> factory.destroy(dir.toFile(), new Options()));
            assertEquals("b", string(d.get(bytes("a"))));
        }
    }

    @Test
    void repairRebuildsADatabaseWithoutItsManifest() throws IOException {
        try (DB db = open(dir)) {
            for (int i = 0; i < 5000; i++) {
                db.put(bytes("key" + i), bytes("value" + i));
            }
            db.compactRange(null, null);
            db.put(bytes("in-the-log"), bytes("yes"));
        }
        for (Path manifest : files(dir, "")) {
            if (manifest.getFileName().toString().startsWith("MANIFEST") || manifest.getFileName().toString().equals("CURRENT")) {
                Files.delete(manifest);
            }
        }
        assertThrows(IOException.class, () -> factory.open(dir.toFile(), new Options()));
        factory.repair(dir.toFile(), new Options());
        try (DB db = factory.open(dir.toFile(), new Options().paranoidChecks(true))) {
            assertEquals("value4999", string(db.get(bytes("key4999"))));
            assertEquals("yes", string(db.get(bytes("in-the-log"))));
            assertEquals(5001, entries(db).size());
        }
    }

    @Test
    void suspendCompactionsHoldsLevelZeroUntilResumed() throws Exception {
        Options options = new Options().createIfMissing(true).writeBufferSize(64 << 10);
        try (DB db = factory.open(dir.toFile(), options)) {
            db.suspendCompactions();
            byte[] value = new byte[1024];
            new Random(1).nextBytes(value);
            // Eight memtables' worth, each over the same keys (so each flushed table overlaps the
            // others and stays in level 0): level 0 passes its compaction trigger (4 files) but
            // stays under its stop trigger (12), so writes never wait for the resume.
            for (int round = 0; round < 8; round++) {
                for (int i = 0; i < 64; i++) {
                    db.put(bytes(String.format("k%05d", i)), value);
                }
            }
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (levelZero(db) < 6 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            int suspended = levelZero(db);
            assertTrue(suspended >= 6, "level 0 grows while compactions are suspended: " + suspended);
            Thread.sleep(200);
            assertEquals(suspended, levelZero(db), "nothing compacts level 0 while suspended");
            db.resumeCompactions();
            while (levelZero(db) >= 4 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertTrue(levelZero(db) < 4, "compactions run again after the resume");
            assertEquals(64, entries(db).size());
        }
    }

    @Test
    void closeWaitsForAWriterStalledBySuspendedCompactionsUntilTheResume() throws Exception {
        DB db = factory.open(dir.toFile(), new Options().createIfMissing(true).writeBufferSize(64 << 10));
        db.suspendCompactions();
        byte[] value = new byte[1024];
        java.util.concurrent.atomic.AtomicReference<Throwable> writerEnd = new java.util.concurrent.atomic.AtomicReference<>();
        Thread writer = new Thread(() -> {
            try {
                for (int round = 0; round < 40; round++) {
                    for (int i = 0; i < 64; i++) {
                        db.put(bytes(String.format("k%05d", i)), value);
                    }
                }
            } catch (Throwable e) {
                writerEnd.set(e);
            }
        });
        writer.start();
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (levelZero(db) < 12 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        Thread.sleep(200);
        assertTrue(writer.isAlive(), "writes wait at level 0's stop trigger until the resume");
        Thread closer = new Thread(() -> {
            try {
                db.close();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        closer.start();
        Thread.sleep(200);
        assertTrue(closer.isAlive(), "close waits for the stalled write");
        db.resumeCompactions();
        writer.join(60_000);
        closer.join(60_000);
        assertFalse(writer.isAlive() || closer.isAlive());
        assertTrue(writerEnd.get() instanceof DBException && writerEnd.get().getMessage().equals("the database is closed"),
                String.valueOf(writerEnd.get()));
        try (DB reopened = open(dir)) {
            assertEquals(1024, reopened.get(bytes("k00000")).length);
        }
    }

    private static int levelZero(DB db) {
        return Integer.parseInt(db.getProperty("leveldb.num-files-at-level0"));
    }
}
