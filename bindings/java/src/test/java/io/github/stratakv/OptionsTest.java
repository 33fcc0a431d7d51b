package io.github.stratakv;

import static io.github.stratakv.StrataDBFactory.factory;
import static io.github.stratakv.TestSupport.bytes;
import static io.github.stratakv.TestSupport.files;
import static io.github.stratakv.TestSupport.size;
import static io.github.stratakv.TestSupport.string;
import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.iq80.leveldb.CompressionType;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.ReadOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every {@code Options} field, and {@code StrataOptions}' bloom filter, changes what it should. */
class OptionsTest {
    @TempDir Path dir;

    /** Writes {@code count} keys with a long shared prefix and 100-byte values, then compacts. */
    private static void fill(DB db, int count) {
        byte[] value = new byte[100];
        for (int i = 0; i < count; i++) {
            java.util.Arrays.fill(value, (byte) ('a' + i % 26));
            db.put(bytes(String.format("a-long-shared-key-prefix-%08d", i)), value);
        }
        db.compactRange(null, null);
    }

    /** Bytes of table files left by {@link #fill} under {@code options}. */
    private long tableBytes(String name, Options options) throws IOException {
        Path db = dir.resolve(name);
        try (DB d = factory.open(db.toFile(), options.createIfMissing(true))) {
            fill(d, 20_000);
        }
        return size(db, ".ldb");
    }

    @Test
    void compressionType() throws IOException {
        long snappy = tableBytes("snappy", new Options().compressionType(CompressionType.SNAPPY));
        long none = tableBytes("none", new Options().compressionType(CompressionType.NONE));
        assertTrue(none > 3 * snappy, "runs of one byte compress: " + none + " vs " + snappy);
    }

    @Test
    void blockSizeAndRestartInterval() throws IOException {
        Options base = new Options().compressionType(CompressionType.NONE);
        long defaults = tableBytes("defaults", base);
        long smallBlocks = tableBytes("small-blocks", new Options().compressionType(CompressionType.NONE).blockSize(1024));
        long everyKeyRestarts = tableBytes("restarts", new Options().compressionType(CompressionType.NONE).blockRestartInterval(1));
        assertTrue(smallBlocks > defaults, "more blocks, more index and trailers: " + smallBlocks + " vs " + defaults);
        // A restart every key stores each 33-byte key whole instead of its last few bytes.
        assertTrue(everyKeyRestarts > defaults + 20_000 * 25, everyKeyRestarts + " vs " + defaults);
    }

    @Test
    void writeBufferSize() throws IOException {
        byte[] value = new byte[1000];
        try (DB small = factory.open(dir.resolve("small").toFile(), new Options().writeBufferSize(64 << 10));
                DB large = factory.open(dir.resolve("large").toFile(), new Options().writeBufferSize(64 << 20))) {
            for (int i = 0; i < 2000; i++) {
                small.put(bytes("k" + i), value);
                large.put(bytes("k" + i), value);
            }
        }
        assertFalse(files(dir.resolve("small"), ".ldb").isEmpty(), "2 MB overflow 64 KiB memtables");
        assertTrue(files(dir.resolve("large"), ".ldb").isEmpty(), "2 MB fit one 64 MiB memtable");
    }

    @Test
    void cacheSizeAndFillCache() throws IOException {
        // Snappy (the default; the values compress): blocks stored uncompressed in a mapped
        // table are read in place and never cached, as LevelDB reads them.
        try (DB db = factory.open(dir.toFile(), new Options())) {
            fill(db, 100_000);
        }
        long small = memoryAfterReadingAll(new Options().cacheSize(64 << 10), true);
        long large = memoryAfterReadingAll(new Options().cacheSize(100 << 20), true);
        long notFilled = memoryAfterReadingAll(new Options().cacheSize(100 << 20), false);
        assertTrue(large > 10_000_000, "100 MiB hold the ~14 MB of blocks read: " + large);
        assertTrue(small < 2_000_000, "64 KiB keep only the recent blocks: " + small);
        assertTrue(notFilled < 2_000_000, "fillCache(false) keeps blocks out: " + notFilled);
    }

    private long memoryAfterReadingAll(Options options, boolean fillCache) throws IOException {
        try (DB db = factory.open(dir.toFile(), options)) {
            ReadOptions read = new ReadOptions().fillCache(fillCache);
            for (int i = 0; i < 100_000; i++) {
                assertEquals(100, db.get(bytes(String.format("a-long-shared-key-prefix-%08d", i)), read).length);
            }
            return Long.parseLong(db.getProperty("leveldb.approximate-memory-usage"));
        }
    }

    /** Flips one byte of the value {@code needle} inside the only table file of {@code db}. */
    private static void damageValue(Path db, String needle) throws IOException {
        List<Path> tables = files(db, ".ldb");
        assertEquals(1, tables.size());
        byte[] table = Files.readAllBytes(tables.get(0));
        int at = new String(table, ISO_8859_1).indexOf(needle);
        assertTrue(at > 0);
        table[at + 2] ^= 0x01;
        Files.write(tables.get(0), table);
    }

    @Test
    void verifyChecksums() throws IOException {
        try (DB db = factory.open(dir.toFile(), new Options().compressionType(CompressionType.NONE))) {
            db.put(bytes("key"), bytes("the value that gets damaged"));
            db.compactRange(null, null);
        }
        damageValue(dir, "the value that gets damaged");
        try (DB db = factory.open(dir.toFile(), new Options().verifyChecksums(false))) {
            assertEquals("thd value that gets damaged", string(db.get(bytes("key"))),
                    "unverified reads return damaged bytes, as LevelDB's do");
            DBException e = assertThrows(DBException.class,
                    () -> db.get(bytes("key"), new ReadOptions().verifyChecksums(true)));
            assertTrue(e.getMessage().startsWith("corruption:"), e.getMessage());
        }
        try (DB db = factory.open(dir.toFile(), new Options().verifyChecksums(true))) {
            DBException e = assertThrows(DBException.class, () -> db.get(bytes("key")));
            assertTrue(e.getMessage().contains(".ldb"), "names the table: " + e.getMessage());
            assertThrows(DBException.class, () -> TestSupport.entries(db));
        }
    }

    @Test
    void paranoidChecks() throws IOException {
        try (DB db = factory.open(dir.toFile(), new Options())) {
            for (int i = 0; i < 100; i++) {
                db.put(bytes("key" + i), bytes("value" + i));
            }
        }
        Path log = files(dir, ".log").get(0);
        byte[] bytes = Files.readAllBytes(log);
        bytes[bytes.length / 2] ^= 0x40;
        Files.write(log, bytes);
        IOException e = assertThrows(IOException.class,
                () -> factory.open(dir.toFile(), new Options().paranoidChecks(true)));
        assertTrue(e.getMessage().startsWith("corruption:"), e.getMessage());
        try (DB db = factory.open(dir.toFile(), new Options().paranoidChecks(false))) {
            assertEquals("value0", string(db.get(bytes("key0"))), "the damaged block is skipped");
        }
    }

    @Test
    void maxOpenFilesAndNegativeSizes() throws IOException {
        try (DB db = factory.open(dir.toFile(), new Options().maxOpenFiles(100))) {
            fill(db, 1000);
        }
        for (Options bad : new Options[] {new Options().maxOpenFiles(-1), new Options().writeBufferSize(-1),
                new Options().blockSize(-1), new Options().blockRestartInterval(-1), new Options().cacheSize(-1)}) {
            IOException e = assertThrows(IOException.class, () -> factory.open(dir.toFile(), bad));
            assertTrue(e.getMessage().contains("must not be negative"), e.getMessage());
        }
    }

    @Test
    void loggerReceivesTheInfoLog() throws IOException {
        List<String> messages = Collections.synchronizedList(new ArrayList<>());
        try (DB db = factory.open(dir.toFile(), new Options().logger(messages::add))) {
            fill(db, 5000);
        }
        assertFalse(messages.isEmpty());
        assertTrue(messages.stream().anyMatch(m -> m.contains("level-0 table")), messages.toString());
        assertFalse(Files.exists(dir.resolve("LOG")), "messages go to the logger instead of LOG");
    }

    @Test
    void aThrowingLoggerLosesOnlyItsMessages() throws IOException {
        try (DB db = factory.open(dir.toFile(), new Options().logger(m -> {
            throw new IllegalStateException("logger failure");
        }))) {
            fill(db, 5000);
            assertEquals(100, db.get(bytes(String.format("a-long-shared-key-prefix-%08d", 7))).length);
        }
    }

    @Test
    void bloomFilter() throws IOException {
        try (DB db = factory.open(dir.resolve("bloom").toFile(), new StrataOptions().bloomFilterBitsPerKey(10))) {
            fill(db, 1000);
            assertArrayEquals(new byte[0], new byte[0]);
            assertEquals(null, db.get(bytes("absent")));
        }
        try (DB db = factory.open(dir.resolve("plain").toFile(), new StrataOptions())) {
            fill(db, 1000);
        }
        assertTrue(tablesContain(dir.resolve("bloom"), "filter.leveldb.BuiltinBloomFilter2"));
        assertFalse(tablesContain(dir.resolve("plain"), "filter.leveldb.BuiltinBloomFilter2"));
        assertThrows(IllegalArgumentException.class, () -> new StrataOptions().bloomFilterBitsPerKey(-1));
    }

    private static boolean tablesContain(Path db, String text) throws IOException {
        for (Path table : files(db, ".ldb")) {
            if (new String(Files.readAllBytes(table), ISO_8859_1).contains(text)) {
                return true;
            }
        }
        return false;
    }
}
