package io.github.stratakv;

import static io.github.stratakv.StrataDBFactory.factory;
import static io.github.stratakv.TestSupport.bytes;
import static io.github.stratakv.TestSupport.files;
import static io.github.stratakv.TestSupport.size;
import static io.github.stratakv.TestSupport.string;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.iq80.leveldb.CompressionType;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.ReadOptions;
import org.iq80.leveldb.Snapshot;
import org.iq80.leveldb.WriteBatch;
import org.iq80.leveldb.WriteOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The walkthrough Java LevelDB users follow (leveldbjni's "LevelDB code up!"), each scenario with
 * Strata in place of leveldbjni and its results checked. Sizes are the walkthrough's where that
 * stays quick; {@code bindings/java/bench} times them against leveldbjni and iq80's LevelDB.
 */
@Timeout(300)
class Seed002ScenariosTest {
    static final int MILLION = 1_000_000;
    @TempDir Path dir;

    private DB open(Options options) throws IOException {
        return factory.open(dir.toFile(), options.createIfMissing(true));
    }

    @Test
    void aMillionPutsGetsAndDeletesThenCompactRange() throws IOException {
        try (DB db = open(new Options())) {
            for (int i = 0; i < MILLION; i++) {
                db.put(bytes("key" + i), bytes("value" + i));
            }
            for (int i = 0; i < MILLION; i++) {
                assertEquals("value" + i, string(db.get(bytes("key" + i))));
            }
            for (int i = 0; i < MILLION; i++) {
                db.delete(bytes("key" + i));
            }
            assertNull(db.get(bytes("key123456")));
            assertFalse(files(dir, ".ldb").isEmpty(), "deletions are tombstones until compacted");
            db.compactRange(null, null);
            assertEquals(List.of(), files(dir, ".ldb"), "compactRange drops the deleted data");
            try (DBIterator it = db.iterator()) {
                it.seekToFirst();
                assertFalse(it.hasNext());
            }
        }
    }

    @Test
    void randomReadsWithABlockCache() throws IOException {
        try (DB db = open(new Options().cacheSize(100 * 1024 * 1024))) {
            for (int i = 0; i < MILLION; i++) {
                db.put(bytes("key" + i), bytes("value" + i));
            }
            Random random = new Random(42);
            for (int n = 0; n < 200_000; n++) {
                int index = random.nextInt(MILLION);
                assertEquals("value" + index, string(db.get(bytes("key" + index))));
            }
            long memory = Long.parseLong(db.getProperty("leveldb.approximate-memory-usage"));
            assertTrue(memory > 8 << 20, "the 100 MiB cache holds more than the default 8 MiB: " + memory);
        }
    }

    @Test
    void syncWritesAndSyncEveryNth() throws IOException {
        try (DB db = open(new Options())) {
            for (int i = 0; i < 2000; i++) {
                db.put(bytes("sync" + i), bytes("value" + i), new WriteOptions().sync(true));
            }
            for (int n : new int[] {100, 10}) {
                for (int i = 0; i < 20_000; i++) {
                    db.put(bytes("every" + n + "-" + i), bytes("value" + i), new WriteOptions().sync(i % n == 0));
                }
            }
        }
        try (DB db = open(new Options())) {
            assertEquals("value1999", string(db.get(bytes("sync1999"))));
            assertEquals("value19999", string(db.get(bytes("every10-19999"))));
            assertEquals("value12345", string(db.get(bytes("every100-12345"))));
        }
    }

    @Test
    void writeBatchEveryN() throws IOException {
        try (DB db = open(new Options())) {
            for (int n : new int[] {1, 2, 5, 10, 100, 1000}) {
                WriteBatch batch = db.createWriteBatch();
                for (int i = 0; i < 100_000; i++) {
                    batch.put(bytes("n" + n + "-key" + i), bytes("value" + i));
                    if (i % n == 0) {
                        db.write(batch);
                        batch.close();
                        batch = db.createWriteBatch();
                    }
                }
                db.write(batch);
                batch.close();
            }
            for (int n : new int[] {1, 2, 5, 10, 100, 1000}) {
                for (int i = 0; i < 100_000; i += 9_999) {
                    assertEquals("value" + i, string(db.get(bytes("n" + n + "-key" + i))));
                }
            }
            int count = 0;
            try (DBIterator it = db.iterator()) {
                while (it.hasNext()) {
                    it.next();
                    count++;
                }
            }
            assertEquals(6 * 100_000, count);
        }
    }

    /** The walkthrough's scan: every key and value in order, as of {@code snapshot}. */
    private static int scan(DB db, Snapshot snapshot) throws IOException {
        int k = 0;
        try (DBIterator it = db.iterator(new ReadOptions().snapshot(snapshot))) {
            it.seekToFirst();
            while (it.hasNext()) {
                Map.Entry<byte[], byte[]> entry = it.next();
                String padding = String.format("%010d", k);
                assertEquals("key" + padding, string(entry.getKey()));
                assertEquals("value" + padding, string(entry.getValue()));
                k++;
            }
        }
        return k;
    }

    @Test
    void snapshotScanIsolatedFromWrites() throws IOException {
        try (DB db = open(new Options())) {
            for (int i = 0; i < 10_000; i++) {
                String padding = String.format("%010d", i);
                db.put(bytes("key" + padding), bytes("value" + padding));
            }
            try (Snapshot ss = db.getSnapshot()) {
                assertEquals(10_000, scan(db, ss));
                for (int i = 0; i < 10_000; i++) {
                    String padding = String.format("%010d", i);
                    db.put(bytes("key" + padding), bytes("!value" + padding));
                }
                db.compactRange(null, null);
                assertEquals(10_000, scan(db, ss));
            }
            assertEquals("!value0000000042", string(db.get(bytes("key0000000042"))));
        }
    }

    /** The walkthrough's bloom and compression runs: even keys written, odd keys read (misses). */
    private void evenKeysOddReads(Options options) throws IOException {
        int count = 200_000;
        try (DB db = open(options)) {
            for (int i = 0; i < count; i++) {
                db.put(bytes("key" + 2 * i), bytes("value" + 2 * i));
            }
            Random random = new Random(7);
            for (int n = 0; n < count; n++) {
                int index = random.nextInt(count);
                assertNull(db.get(bytes("key" + (2 * index + 1))));
                assertEquals("value" + 2 * index, string(db.get(bytes("key" + 2 * index))));
            }
            for (int i = 0; i < count; i++) {
                db.delete(bytes("key" + 2 * i));
            }
            assertNull(db.get(bytes("key0")));
        }
    }

    @Test
    void bloomFilterOnMisses() throws IOException {
        evenKeysOddReads(new StrataOptions().bloomFilterBitsPerKey(10));
        assertTrue(size(dir, ".ldb") > 0);
    }

    @Test
    void compressionOnAndOff() throws IOException {
        evenKeysOddReads(new Options().compressionType(CompressionType.NONE));
        long uncompressed = size(dir, ".ldb") + size(dir, ".log");
        factory.destroy(dir.toFile(), new Options());
        evenKeysOddReads(new Options().compressionType(CompressionType.SNAPPY));
        long compressed = size(dir, ".ldb") + size(dir, ".log");
        assertTrue(uncompressed > compressed, uncompressed + " vs " + compressed);
    }
}
